#pragma once
// A small index file per run, RUN_DIR/.ringmaster-index.json, so that reading a run's record reads one
// small file instead of every metrics.csv. It holds the run's RunRecord and, for each file the record is
// read from (job.json, summary.json, metrics.csv, eval.csv, scalars.csv, notes.json), whether it existed,
// its size and its modification time in nanoseconds (the run's fingerprint). It is stale, and rebuilt, when
// any of these differ, when it is missing or unreadable, or when its format is older than this reader's.
// A run directory that cannot be written (read-only, someone else's) is still read; its index is just not
// saved. Listing many runs goes through the root's index first (root_index.h), which holds the same
// fingerprints and records for all the runs of a folder.

#include <QJsonObject>
#include <QString>

#include <array>
#include <optional>

#include "runs/run_record.h"

namespace ringmaster::runs {

inline constexpr const char* kIndexFile = ".ringmaster-index.json";
// Raised whenever what a record holds or how it is read changes, so older indexes are rebuilt (2: the run's
// title and notes; a script's train/loss and val/acc count as its loss and accuracy).
inline constexpr int kIndexFormat = 2;

enum class IndexUse { Fresh, Rebuilt };

// What one stat(2) of a source file told: whether it exists (and is a plain file), size and times.
struct FileStamp
{
    bool exists = false;
    bool isFile = false;
    qint64 size = 0;
    qint64 mtimeNs = 0;
    qint64 ctimeNs = 0;   // when the file last changed in any way (cannot be set back, unlike mtime)
    bool operator==(const FileStamp& o) const
    {
        return exists == o.exists && isFile == o.isFile && size == o.size && mtimeNs == o.mtimeNs && ctimeNs == o.ctimeNs;
    }
};

// The stat of each of recordSourceFiles() of a run directory, in that order: one stat a file, nothing opened.
struct RunFingerprint
{
    std::array<FileStamp, 6> files;
    // As the index stores it: {name: {"size", "mtime_ns"} or null}.
    QJsonObject toJson() const;
    // True when a marker file of a run directory (job.json, summary.json, metrics.csv, scalars.csv) is a
    // plain file: isRunDirectory() without stating again.
    bool isRun() const;
    const FileStamp& stamp(const char* fileName) const;
    bool operator==(const RunFingerprint& o) const { return files == o.files; }
};

RunFingerprint fingerprintRun(const QString& dir);

// The run's record, from its index when that is fresh, else read from the files (and the index saved), with
// its liveness (run_liveness.h) asked now.
RunRecord loadRunRecord(const QString& dir, IndexUse* use = nullptr);
// Its two halves, with the fingerprint already taken (the listing has it, and looks into the runs' indexes
// from several threads but reads runs' files from one: parsing CSVs in 8 threads was no faster on 2 busy
// cores, and faulted more pages in malloc's per-thread arenas): the record from the run's index when that
// is fresh, and the record read from the files with the index saved.
std::optional<RunRecord> indexedRunRecord(const QString& dir, const RunFingerprint& fingerprint);
RunRecord rebuildRunRecord(const QString& dir, const RunFingerprint& fingerprint);

// The record as an index stores it (no name and path: the folder's own win, runs get renamed and moved),
// and back, with the name and path of DIR.
QJsonObject storedRecord(const RunRecord& record);
RunRecord recordFromStored(const QJsonObject& stored, const QString& dir, const QString& name);

} // namespace ringmaster::runs
