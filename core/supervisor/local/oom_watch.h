#pragma once
// Tells whether the kernel's out-of-memory killer ended a process — the most common cause of a
// silent SIGKILL in training. Two witnesses:
//  - the kernel log (/dev/kmsg, readable by root): "Killed process PID (…)" or "oom-kill:… pid=PID",
//    in a record written after the process was first tracked (pids are reused): certain;
//  - the OOM-kill count of the memory cgroup the process ran in (cgroup v2 `memory.events`, v1
//    `memory.oom_control`, line "oom_kill N"), read when the process is tracked and again after it
//    died: it rose, but the victim may have been another process of that cgroup, so only likely.
// Track a process while it is alive: once it is gone, /proc no longer says which cgroup it was in.

#include <QHash>
#include <QString>

namespace ringmaster::supervisor {

class OomWatch
{
public:
    // Starts (or, when the process has moved to another cgroup since, restarts) watching `pid`.
    // Cheap enough to call on every watchdog tick.
    void track(qint64 pid);
    enum class Evidence { None, CgroupCountRose, KernelLogNamesIt };
    // After `pid` died by SIGKILL: did the OOM killer do it?
    Evidence oomEvidence(qint64 pid) const;
    void clear() { m_tracked.clear(); }

private:
    struct Tracked
    {
        QString countFile;       // memory.events or memory.oom_control of its cgroup ("" if unknown)
        qint64 countAtStart = -1;
        qint64 sinceUsec = 0;    // CLOCK_MONOTONIC when first tracked, as the kernel log stamps records
    };
    QHash<qint64, Tracked> m_tracked;
};

} // namespace ringmaster::supervisor
