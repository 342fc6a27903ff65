#pragma once
// One index file per folder of runs (a root), ROOT/.ringmaster-runs-index.json, so that listing 1,000 runs
// whose files are not in the page cache reads one file plus one stat of each run's folder, instead of a
// folder block, six inodes and an index file per run (2.5 to 3 disk reads a run: 0.7 s on a quiet disk,
// 5 to 8 s on a busy one). Each entry is a child folder's name with the folder's own identity and times
// (device, inode, mtime, ctime) and either "not a run" or the run's record with the fingerprint of its
// source files (as the per-run index holds them, run_index.h).
//
// Trusting an entry on the folder's stat alone is right only for a folder whose files are no longer
// changed in place, so an entry is trusted that way only when the run was *settled* when it was written:
// summary.json existed and had been written after job.json and every CSV (the run ended and nothing
// resumed it since), and none of its source files had changed for kQuietSeconds (timestamps are coarse).
// Ringmaster changes a settled run only by creating, renaming or deleting entries of its folder
// (summary.json, job.json and notes.json are replaced whole; a resume rewrites job.json before it appends
// a row), and each of these changes the folder's mtime and ctime. Runs that are not settled (live, resumed,
// killed before their summary) have their source files stat'ed on every listing, as before. So does a run
// whose folder changed: if its fingerprint still matches, its record is kept, else it is read again.
// Limitation: a file of a settled run edited in place by hand (`echo >> summary.json`) is not noticed by
// the listing until the folder changes (`touch RUN_DIR`); opening the run (loadRunRecord) always notices.
//
// The file is written next to the runs when the root is writable, else in the user's cache folder
// ($XDG_CACHE_HOME/ringmaster/runs-index/, named by a hash of the root's path). Written to a temporary
// name and renamed, without fsync: a cache; a torn or foreign one is ignored and rewritten.

#include <QHash>
#include <QJsonObject>
#include <QString>

#include "runs/run_record.h"

namespace ringmaster::runs {

inline constexpr const char* kRootIndexFile = ".ringmaster-runs-index.json";
inline constexpr int kRootIndexFormat = 1;
inline constexpr int kQuietSeconds = 2;

// A folder's identity and times, from one stat.
struct FolderStamp
{
    quint64 device = 0;
    quint64 inode = 0;
    qint64 mtimeNs = 0;
    qint64 ctimeNs = 0;
    bool operator==(const FolderStamp& o) const
    {
        return device == o.device && inode == o.inode && mtimeNs == o.mtimeNs && ctimeNs == o.ctimeNs;
    }
};

struct RootIndexEntry
{
    FolderStamp folder;
    bool isRun = false;
    bool settled = false;     // trusted on the folder's stamp alone (see above)
    QJsonObject files;        // the run's fingerprint (RunFingerprint::toJson)
    QJsonObject record;       // the run's record as stored (storedRecord)
};

class RootIndex
{
public:
    // The index of ROOT (absolute, clean); empty when there is none or it is unreadable or of another format.
    static RootIndex load(const QString& root);
    // Writes it (best effort: an unwritable place leaves the old one, or none).
    void save(const QString& root) const;

    const RootIndexEntry* find(const QString& name) const;
    void put(const QString& name, const RootIndexEntry& entry) { m_entries.insert(name, entry); }
    int size() const { return static_cast<int>(m_entries.size()); }

private:
    QHash<QString, RootIndexEntry> m_entries;
};

// Where ROOT's index is written: in ROOT when it is writable, else in the user's cache folder.
QString rootIndexPath(const QString& root);

} // namespace ringmaster::runs
