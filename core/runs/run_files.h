#pragma once
// What a run directory holds, by name (see docs/run-directory.md), and how the runs library tells a
// run directory from any other folder. RunsError carries the one-line message of bad input (a folder
// that is not a run, an unwritable output) that ringmaster-runs prints before exiting 2.

#include <QString>
#include <QStringList>

#include <stdexcept>

#include "protocol/run_layout.h"

namespace ringmaster::runs {

// The names are the run directory's own, declared once in core/protocol/run_layout.h.
using protocol::kCheckpointsFolder;
using protocol::kClassesFile;
using protocol::kCommandsFile;
using protocol::kEnvironmentFile;
using protocol::kEvalFile;
using protocol::kJobFile;
using protocol::kLauncherLogFile;
using protocol::kLogsFolder;
using protocol::kMetricsFile;
using protocol::kModelFile;
using protocol::kNotesFile;
using protocol::kScalarsFile;
using protocol::kSlurmFolder;
using protocol::kSlurmJobIdFile;
using protocol::kSummaryFile;
// The CSVs' columns (metrics.csv, eval.csv, scalars.csv, system.csv), by name.
namespace column = protocol::column;
using protocol::kEvalColumns;
using protocol::kMetricsColumns;

// The files a run's listed fields are read from (notes.json too: run_notes.h); the index is stale when any
// of them changed.
QStringList recordSourceFiles();

class RunsError : public std::runtime_error
{
public:
    explicit RunsError(const QString& message) : std::runtime_error(message.toStdString()) {}
    QString message() const { return QString::fromStdString(what()); }
};

// True when the folder holds job.json, summary.json, metrics.csv or scalars.csv.
bool isRunDirectory(const QString& dir);
// Throws RunsError naming the folder and what a run directory holds when it is not one.
void requireRunDirectory(const QString& dir);

} // namespace ringmaster::runs
