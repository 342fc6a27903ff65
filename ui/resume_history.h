#pragma once
// A resumed run's chart continues rather than starting empty: before the resumed ranks report, the
// Training chart is given the run's own metrics.csv and eval.csv rows up to the step it resumes from
// (runs::resumeStepOf: the checkpoint's, from its name step-N.pt; the newest checkpoint's for a whole run directory), which
// are exactly the rows the trainer keeps when it cuts the files back to that step. The All scalars chart
// is given the run's scalars.csv rows up to that step the same way; scalars.csv is never cut back, so a
// step and name recorded twice (an earlier attempt, then again after a resume) keeps its last row. The
// evaluation table is given the run's eval.csv rows up to that step too. Reads small CSVs (core/runs
// csv_table.h) on the GUI thread, once per resume.

#include <QString>

namespace ringmaster::ui {

class EvalTable;
class LossChart;
class ScalarChart;

// Appends RUN_DIR's rows with step <= the resumed step to CHART; returns how many training steps it added.
int replayResumedHistory(LossChart& chart, const QString& resumeTarget);
// Appends RUN_DIR/scalars.csv's points with step <= the resumed step to CHART (as the live run's);
// returns how many points it added.
int replayResumedScalars(ScalarChart& chart, const QString& resumeTarget);
// Gives TABLE RUN_DIR/eval.csv's rows with step <= the resumed step; returns how many.
int replayResumedEvals(EvalTable& table, const QString& resumeTarget);

} // namespace ringmaster::ui
