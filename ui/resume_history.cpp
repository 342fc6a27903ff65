#include "resume_history.h"

#include <QFileInfo>

#include "checkpoint_list.h"
#include "csv_table.h"
#include "job_spec.h"
#include "loss_chart.h"
#include "run_files.h"
#include "run_types.h"

namespace ringmaster::ui {
namespace {

double number(const runs::CsvTable& table, const QList<QByteArray>& row, const char* name)
{
    const int column = table.column(name);
    return column < 0 ? 0.0 : runs::parseCsvNumber(row.value(column)).value_or(0.0);
}

qint64 integer(const runs::CsvTable& table, const QList<QByteArray>& row, const char* name)
{
    const int column = table.column(name);
    return column < 0 ? -1 : runs::parseCsvInteger(row.value(column)).value_or(-1);
}

} // namespace

qint64 resumeStepOf(const QString& resumeTarget)
{
    const QFileInfo target(resumeTarget);
    if (target.isFile()) return runs::checkpointStepOfName(target.fileName());
    const auto checkpoints = runs::listRunCheckpoints(resumeTarget);
    return checkpoints.isEmpty() ? -1 : checkpoints.last().step;
}

int replayResumedHistory(LossChart& chart, const QString& resumeTarget)
{
    const qint64 upTo = resumeStepOf(resumeTarget);
    const QString runDir = supervisor::runDirectoryOf(resumeTarget);
    if (upTo < 0 || runDir.isEmpty()) return 0;
    const auto metrics = runs::readCsvTable(runDir + QLatin1Char('/') + QLatin1String(runs::kMetricsFile), QLatin1String(runs::kMetricsFile));
    int added = 0;
    for (const auto& row : metrics.rows) {
        supervisor::StepMetric metric;
        metric.step = integer(metrics, row, "step");
        if (metric.step < 0 || metric.step > upTo) continue;
        metric.epoch = integer(metrics, row, "epoch");
        metric.loss = number(metrics, row, "loss");
        metric.lr = number(metrics, row, "lr");
        metric.samplesPerSec = number(metrics, row, "samples_per_sec");
        metric.wallTime = number(metrics, row, "wall_time");
        chart.append(metric);
        ++added;
    }
    const auto eval = runs::readCsvTable(runDir + QLatin1Char('/') + QLatin1String(runs::kEvalFile), QLatin1String(runs::kEvalFile));
    for (const auto& row : eval.rows) {
        supervisor::EvalMetric metric;
        metric.step = integer(eval, row, "step");
        if (metric.step < 0 || metric.step > upTo) continue;
        metric.epoch = integer(eval, row, "epoch");
        metric.valLoss = number(eval, row, "val_loss");
        metric.valAccuracy = number(eval, row, "val_accuracy");
        chart.appendEval(metric);
    }
    chart.flush();
    return added;
}

} // namespace ringmaster::ui
