#pragma once
// A small index file per run, RUN_DIR/.ringmaster-index.json, so that listing a thousand runs reads a
// thousand small files instead of every metrics.csv. It holds the run's RunRecord and, for each file the
// record is read from (job.json, summary.json, metrics.csv, eval.csv, scalars.csv, notes.json), whether it existed,
// its size and its modification time in nanoseconds. It is stale, and rebuilt, when any of these differ,
// when it is missing or unreadable, or when its format is older than this reader's. A run directory that
// cannot be written (read-only, someone else's) is still listed; its index is just not saved.

#include <QString>

#include "run_record.h"

namespace ringmaster::runs {

inline constexpr const char* kIndexFile = ".ringmaster-index.json";
// Raised whenever what a record holds or how it is read changes, so older indexes are rebuilt (2: the run's
// title and notes; a script's train/loss and val/acc count as its loss and accuracy).
inline constexpr int kIndexFormat = 2;

enum class IndexUse { Fresh, Rebuilt };

// The run's record, from its index when that is fresh, else read from the files (and the index saved).
RunRecord loadRunRecord(const QString& dir, IndexUse* use = nullptr);

} // namespace ringmaster::runs
