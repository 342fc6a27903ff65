#include "ui/resume_history.h"

#include <QFileInfo>

#include <algorithm>
#include <cmath>
#include <map>

#include "runs/checkpoint_list.h"
#include "runs/csv_table.h"
#include "ui/panes/eval_table.h"
#include "supervisor/job_spec.h"
#include "ui/charts/loss_chart.h"
#include "runs/run_files.h"
#include "supervisor/run_types.h"
#include "ui/charts/scalar_chart.h"
#include "runs/scalar_table.h"

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

int replayResumedHistory(LossChart& chart, const QString& resumeTarget)
{
    const qint64 upTo = runs::resumeStepOf(resumeTarget);
    const QString runDir = supervisor::runDirectoryOf(resumeTarget);
    if (upTo < 0 || runDir.isEmpty()) return 0;
    // Streamed twice (a week-long run's metrics.csv is gigabytes): the rows up to the checkpoint are counted,
    // then at most runs::kChartPointsPerSeries of them, evenly spaced, are drawn, the last one always.
    const QString metricsPath = runDir + QLatin1Char('/') + QLatin1String(runs::kMetricsFile);
    qint64 rowsUpTo = 0;
    {
        runs::CsvStream count(metricsPath, QLatin1String(runs::kMetricsFile));
        const int stepColumn = count.column(runs::column::kStep);
        QList<QByteArray> row;
        int line = 0;
        while (stepColumn >= 0 && count.next(&row, &line)) {
            const auto step = runs::parseCsvInteger(row[stepColumn]);
            if (step && *step >= 0 && *step <= upTo) ++rowsUpTo;
        }
    }
    const qint64 stride = std::max<qint64>(1, (rowsUpTo + runs::kChartPointsPerSeries - 1) / runs::kChartPointsPerSeries);
    runs::CsvStream metrics(metricsPath, QLatin1String(runs::kMetricsFile));
    const auto column = [&metrics](const char* name) { return metrics.column(name); };
    const auto numberAt = [](const QList<QByteArray>& row, int index) {
        const auto value = index >= 0 ? runs::parseCsvNumber(row[index]) : std::nullopt;
        return value ? *value : 0.0;
    };
    const int stepColumn = column(runs::column::kStep);
    int added = 0;
    qint64 seen = 0;
    QList<QByteArray> row;
    int line = 0;
    while (stepColumn >= 0 && metrics.next(&row, &line)) {
        supervisor::StepMetric metric;
        const auto step = runs::parseCsvInteger(row[stepColumn]);
        metric.step = step ? *step : -1;
        if (metric.step < 0 || metric.step > upTo) continue;
        if (seen++ % stride != 0 && seen != rowsUpTo) continue;
        const auto epoch = column(runs::column::kEpoch) >= 0 ? runs::parseCsvInteger(row[column(runs::column::kEpoch)]) : std::nullopt;
        metric.epoch = epoch ? *epoch : -1;
        metric.loss = numberAt(row, column(runs::column::kLoss));
        metric.lr = numberAt(row, column(runs::column::kLr));
        metric.samplesPerSec = numberAt(row, column(runs::column::kSamplesPerSec));
        metric.wallTime = numberAt(row, column(runs::column::kWallTime));
        chart.append(metric);
        ++added;
    }
    const auto eval = runs::readCsvTable(runDir + QLatin1Char('/') + QLatin1String(runs::kEvalFile), QLatin1String(runs::kEvalFile));
    for (const auto& row : eval.rows) {
        supervisor::EvalMetric metric;
        metric.step = integer(eval, row, runs::column::kStep);
        if (metric.step < 0 || metric.step > upTo) continue;
        metric.epoch = integer(eval, row, runs::column::kEpoch);
        metric.valLoss = number(eval, row, runs::column::kValLoss);
        metric.valAccuracy = number(eval, row, runs::column::kValAccuracy);
        chart.appendEval(metric);
    }
    chart.flush();
    return added;
}

int replayResumedScalars(ScalarChart& chart, const QString& resumeTarget)
{
    const qint64 upTo = runs::resumeStepOf(resumeTarget);
    const QString runDir = supervisor::runDirectoryOf(resumeTarget);
    if (upTo < 0 || runDir.isEmpty()) return 0;
    struct Point
    {
        double wallTime;
        double value;
    };
    // Read as a chart reads a past run (bounded points per series), then the last row of each (step, name).
    const runs::ScalarTable table = runs::readRunScalars(runDir, runs::kChartPointsPerSeries);
    std::map<std::pair<qint64, QString>, Point> last; // (step, name) -> its last row; ordered by step
    for (const runs::ScalarRecord& record : table.records) {
        if (record.step < 0 || record.step > upTo || record.name.isEmpty()) continue;
        last[{record.step, record.name}] = Point{record.wallTime.value_or(0.0), record.value};
    }
    for (const auto& [key, point] : last) chart.appendPoint(QString(), key.second, key.first, point.wallTime, point.value);
    chart.flush();
    return static_cast<int>(last.size());
}

int replayResumedEvals(EvalTable& table, const QString& resumeTarget)
{
    const qint64 upTo = runs::resumeStepOf(resumeTarget);
    const QString runDir = supervisor::runDirectoryOf(resumeTarget);
    if (upTo < 0 || runDir.isEmpty()) return 0;
    const EvalReading reading = runs::readRunEvals(runDir, upTo);
    table.setReading(reading);
    return static_cast<int>(reading.rows.size());
}

} // namespace ringmaster::ui
