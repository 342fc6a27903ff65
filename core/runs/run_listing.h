#pragma once
// Finds the runs under one or more roots (the launcher's output roots): every direct child folder that is a
// run directory, read through the root's index (root_index.h) and, where that does not answer, the run's
// own index (run_index.h) or its files. Other folders and files are skipped silently; a root that does not
// exist or is not a folder is bad input (RunsError), checked before anything is read. Runs whose folders
// must be looked into are looked into by a few threads at once, so that a cold disk serves several reads
// at a time.

#include <QList>
#include <QStringList>

#include "runs/run_record.h"

namespace ringmaster::runs {

// How each listed run was answered (for tests and benchmarks).
struct ListingCounts
{
    int trusted = 0;     // by the root's index, on its folder's stat alone (a settled run)
    int unchanged = 0;   // by the root's index, after stating its source files (fingerprint unchanged)
    int runIndex = 0;    // by the run's own index (fresh)
    int reread = 0;      // read from its files (new, changed, or no index)
};

// The runs under ROOTS, oldest first (then by name). Throws RunsError for a root that is not a folder.
QList<RunRecord> listRuns(const QStringList& roots, ListingCounts* counts = nullptr);

} // namespace ringmaster::runs
