#pragma once
// What a run directory holds, by name (see docs/run-directory.md), and how the runs library tells a
// run directory from any other folder. RunsError carries the one-line message of bad input (a folder
// that is not a run, an unwritable output) that ringmaster-runs prints before exiting 2.

#include <QString>
#include <QStringList>

#include <stdexcept>

#include "../protocol/run_layout.h"

namespace ringmaster::runs {

inline constexpr const char* kJobFile = "job.json";
inline constexpr const char* kSummaryFile = "summary.json";
inline constexpr const char* kMetricsFile = "metrics.csv";
inline constexpr const char* kEvalFile = "eval.csv";
inline constexpr const char* kScalarsFile = "scalars.csv";
inline constexpr const char* kClassesFile = "classes.json";
inline constexpr const char* kCommandsFile = "commands.json";
inline constexpr const char* kModelFile = "model.pt";
inline constexpr const char* kLogsFolder = "logs";
inline constexpr const char* kCheckpointsFolder = protocol::kCheckpointsFolder;
inline constexpr const char* kSlurmFolder = "slurm";   // a Slurm run's job.sbatch, job-id, batch-<id>.log

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
