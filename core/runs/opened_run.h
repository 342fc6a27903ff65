#pragma once
// What the app's Runs tab shows of a past run, read from its files on a worker thread (no widgets here): its scalars (core/runs scalar_table.h) for the chart, its job.json for the Hyperparameters tab,
// its record as its files say now (loadRunRecord), problems included, for the summary and the red line
// naming what could not be read, and, for the first run opened, the last lines of each log and its
// evaluations (run_evals.h). Opening a run is then the same whether it ended an hour or a year ago.

#include <QString>
#include <QStringList>

#include <map>

#include "runs/job_diff.h"
#include "runs/run_evals.h"
#include "runs/run_record.h"
#include "runs/scalar_table.h"

namespace ringmaster::runs {

struct OpenedRun
{
    QString label;
    ScalarTable table;
    std::map<int, QStringList> logLines;   // by rank, -1 the launcher (the first run only)
    RunJob job;                            // its job.json, for the Hyperparameters tab
    RunRecord record;                      // read now, with its problems
    EvalReading evals;                     // the first run only
    ScalarTable system;                    // its system.csv (the first run only)
};

// Reads RUN_DIR under LABEL; LOG_LINES > 0 for the first run opened: its evaluations, system use and the last
// LOG_LINES of each log. Never throws: what cannot be read is in record.problems, table.problems or
// evals.problems.
OpenedRun readOpenedRun(const QString& runDir, const QString& label, int logLines);

// The last lines of each log of the run (logs/rank-N.log by rank, logs/launcher.log as -1), at most
// LINES of each.
std::map<int, QStringList> readLogTails(const QString& runDir, int lines);

} // namespace ringmaster::runs
