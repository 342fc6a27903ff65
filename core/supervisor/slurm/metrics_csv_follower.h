#pragma once
// Follows rank 0's metrics.csv and eval.csv in a run directory as the trainer appends to them, and turns
// each new row into the StepMetric / EvalMetric the socket would have carried. A Slurm run uses it when
// rank 0 cannot reach this host (no socket, no TCP) and when it follows a run again with --attach: the
// run directory is shared, so the files are the path that always exists. Columns are found by the
// header's names (a header seen again, as after a resume rewrote the file, is taken afresh); a row
// without a step is skipped; a value that does not parse becomes NaN.

#include <QList>
#include <QStringList>

#include "supervisor/run_types.h"
#include "supervisor/slurm/file_tail.h"

namespace ringmaster::supervisor {

class MetricsCsvFollower
{
public:
    MetricsCsvFollower() = default;
    explicit MetricsCsvFollower(const QString& runDir);

    // The rows appended since the last poll.
    QList<StepMetric> pollSteps();
    QList<EvalMetric> pollEvals();

private:
    FileTail m_metrics;
    FileTail m_eval;
    QStringList m_metricsColumns;
    QStringList m_evalColumns;
};

} // namespace ringmaster::supervisor
