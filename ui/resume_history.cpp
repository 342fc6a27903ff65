#include "resume_history.h"

#include <QFileInfo>

#include <map>

#include "checkpoint_list.h"
#include "csv_table.h"
#include "eval_table.h"
#include "job_spec.h"
#include "loss_chart.h"
#include "run_files.h"
#include "run_types.h"
#include "scalar_chart.h"

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

int replayResumedScalars(ScalarChart& chart, const QString& resumeTarget)
{
    const qint64 upTo = resumeStepOf(resumeTarget);
    const QString runDir = supervisor::runDirectoryOf(resumeTarget);
    if (upTo < 0 || runDir.isEmpty()) return 0;
    const auto scalars = runs::readCsvTable(runDir + QLatin1Char('/') + QLatin1String(runs::kScalarsFile), QLatin1String(runs::kScalarsFile));
    const int nameColumn = scalars.column("name");
    if (nameColumn < 0) return 0;
    struct Point
    {
        double wallTime;
        double value;
    };
    std::map<std::pair<qint64, QString>, Point> last; // (step, name) -> its last row; ordered by step
    for (const auto& row : scalars.rows) {
        const qint64 step = integer(scalars, row, "step");
        if (step < 0 || step > upTo) continue;
        const QString name = QString::fromUtf8(row.value(nameColumn));
        if (name.isEmpty()) continue;
        last[{step, name}] = Point{number(scalars, row, "wall_time"), number(scalars, row, "value")};
    }
    for (const auto& [key, point] : last) chart.appendPoint(QString(), key.second, key.first, point.wallTime, point.value);
    chart.flush();
    return static_cast<int>(last.size());
}

int replayResumedEvals(EvalTable& table, const QString& resumeTarget)
{
    const qint64 upTo = resumeStepOf(resumeTarget);
    const QString runDir = supervisor::runDirectoryOf(resumeTarget);
    if (upTo < 0 || runDir.isEmpty()) return 0;
    const EvalReading reading = readRunEvals(runDir, upTo);
    table.setReading(reading);
    return static_cast<int>(reading.rows.size());
}

} // namespace ringmaster::ui
