#pragma once
// What a rank's processes use, read from /proc: the rank's own process and every descendant (a script's data
// loader workers, a compiler it spawned), summed, so a rank is seen as the user sees it in `top`'s tree view.
// Each rank's tree is walked through /proc/PID/task/TID/children (so the cost is the ranks' processes, not the
// machine's); a kernel without those files gets one scan of /proc per call, each process's parent linking it to
// at most one rank. Counters
// (CPU time, bytes) are cumulative; system_sampler.h turns two readings into rates. A process that exits
// between the scan and its read is skipped; its past CPU time leaves the sum with it (the kernel keeps it only
// for a parent that waited for it).

#include <QHash>
#include <QList>
#include <QtGlobal>

namespace ringmaster::supervisor::proc {

struct ProcessUsage
{
    double cpuSeconds = 0.0;  // user + system, over the life of the processes now alive
    qint64 rssKiB = 0;        // resident memory now
    int threads = 0;
    int processes = 0;
    qint64 readBytes = 0;     // /proc/PID/io read_bytes and write_bytes: what reached storage (not the page cache)
    qint64 writeBytes = 0;
};

// How the trees are found: the children files where the kernel has them, else the scan; or the scan always.
enum class TreeWalk { Children, ParentScan };

// Usage of each root's process tree, keyed by the root pid; a root that is gone is absent.
QHash<qint64, ProcessUsage> treeUsage(const QList<qint64>& roots, TreeWalk walk = TreeWalk::Children);

} // namespace ringmaster::supervisor::proc
