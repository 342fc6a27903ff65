#pragma once
// What the Runs tab shows of a past run, read from its files on a worker thread (nothing here touches a
// widget): its scalars (core/runs scalar_table.h) for the chart, its job.json for the Hyperparameters tab,
// its record as its files say now (loadRunRecord), problems included, for the summary and the red line
// naming what could not be read, and, for the first run opened, the last lines of each log and its
// evaluations (eval_table.h). Opening a run is then the same whether it ended an hour or a year ago.

#include <QString>
#include <QStringList>

#include <map>

#include "eval_table.h"
#include "job_diff.h"
#include "run_record.h"
#include "scalar_table.h"

namespace ringmaster::ui {

struct OpenedRun
{
    QString label;
    runs::ScalarTable table;
    std::map<int, QStringList> logLines;   // by rank, -1 the launcher (the first run only)
    runs::RunJob job;                      // its job.json, for the Hyperparameters tab
    runs::RunRecord record;                // read now, with its problems
    EvalReading evals;                     // the first run only
    runs::ScalarTable system;              // its system.csv (the first run only)
};

// Reads RUN_DIR under LABEL; WITH_LOGS_AND_EVALS for the first run opened. Never throws: what cannot be
// read is in record.problems, table.problems or evals.problems.
OpenedRun readOpenedRun(const QString& runDir, const QString& label, bool withLogsAndEvals);

// The last lines of each log of the run (logs/rank-N.log by rank, logs/launcher.log as -1), at most
// LINES of each.
std::map<int, QStringList> readLogTails(const QString& runDir, int lines);

} // namespace ringmaster::ui
