#pragma once
// Finds the runs under one or more roots (the launcher's output roots): every direct child folder that is a
// run directory, read through its index (run_index.h). Other folders and files are skipped silently; a
// root that does not exist or is not a folder is bad input (RunsError), checked before anything is read.

#include <QList>
#include <QStringList>

#include "run_record.h"

namespace ringmaster::runs {

// The runs under ROOTS, oldest first (then by name). Throws RunsError for a root that is not a folder.
QList<RunRecord> listRuns(const QStringList& roots);

} // namespace ringmaster::runs
