#pragma once
// A run's evaluations as its files hold them: one row per validation pass of the built-in trainer (RUN_DIR/eval.csv),
// each with the wall time of the last training step at or before it (from RUN_DIR/metrics.csv, in seconds since
// the run's start, as the charts count), and the problems met reading them. The Runs tab's and a resume's
// Evaluation table show these (ui/panes/eval_table.h); no widgets here, so any thread may read.

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace ringmaster::runs {

struct EvalRow
{
    qint64 epoch = 0;
    qint64 step = 0;
    double valLoss = 0.0;
    double valAccuracy = 0.0;        // NaN when the model has none (regression)
    std::optional<double> wallTime;  // seconds since the run's start
};

// A run's evaluations as its files hold them, and the problems met reading them (each naming its file).
struct EvalReading
{
    bool exists = false;   // the run has an eval.csv
    QList<EvalRow> rows;
    QStringList problems;
};

// Reads RUN_DIR/eval.csv, with each row's wall time from RUN_DIR/metrics.csv; rows after UP_TO_STEP are left
// out when it is >= 0 (a resume replays the evaluations up to its checkpoint). No Qt widgets: any thread.
EvalReading readRunEvals(const QString& runDir, qint64 upToStep = -1);

} // namespace ringmaster::runs
