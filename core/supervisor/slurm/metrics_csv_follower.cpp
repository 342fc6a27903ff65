#include "supervisor/slurm/metrics_csv_follower.h"

#include <QDir>

#include <cmath>

#include "protocol/run_layout.h"

namespace ringmaster::supervisor {
namespace {

namespace column = protocol::column;

double field(const QStringList& columns, const QStringList& values, const char* name, double fallback = std::nan(""))
{
    const auto at = columns.indexOf(QLatin1String(name));
    if (at < 0 || at >= values.size()) return fallback;
    bool ok = false;
    const double value = values.at(at).toDouble(&ok);
    return ok ? value : fallback;
}

} // namespace

MetricsCsvFollower::MetricsCsvFollower(const QString& runDir)
    : m_metrics(QDir(runDir).filePath(QLatin1String(protocol::kMetricsFile)))
    , m_eval(QDir(runDir).filePath(QLatin1String(protocol::kEvalFile)))
{
}

QList<StepMetric> MetricsCsvFollower::pollSteps()
{
    QList<StepMetric> steps;
    for (const QString& line : m_metrics.poll()) {
        const QStringList values = line.split(QLatin1Char(','));
        if (values.first() == QLatin1String(protocol::kMetricsColumns[0])) { // the header
            m_metricsColumns = values;
            continue;
        }
        if (m_metricsColumns.isEmpty()) continue;
        StepMetric metric;
        metric.step = static_cast<qint64>(field(m_metricsColumns, values, column::kStep, -1));
        metric.epoch = static_cast<qint64>(field(m_metricsColumns, values, column::kEpoch, 0));
        metric.loss = field(m_metricsColumns, values, column::kLoss);
        metric.lr = field(m_metricsColumns, values, column::kLr);
        metric.samplesPerSec = field(m_metricsColumns, values, column::kSamplesPerSec);
        metric.wallTime = field(m_metricsColumns, values, column::kWallTime, 0);
        if (metric.step >= 0) steps.append(metric);
    }
    return steps;
}

QList<EvalMetric> MetricsCsvFollower::pollEvals()
{
    QList<EvalMetric> evals;
    for (const QString& line : m_eval.poll()) {
        const QStringList values = line.split(QLatin1Char(','));
        if (values.first() == QLatin1String(protocol::kEvalColumns[0])) { // the header
            m_evalColumns = values;
            continue;
        }
        if (m_evalColumns.isEmpty()) continue;
        EvalMetric metric;
        metric.epoch = static_cast<qint64>(field(m_evalColumns, values, column::kEpoch, 0));
        metric.step = static_cast<qint64>(field(m_evalColumns, values, column::kStep, -1));
        metric.valLoss = field(m_evalColumns, values, column::kValLoss);
        metric.valAccuracy = field(m_evalColumns, values, column::kValAccuracy);
        if (metric.step >= 0) evals.append(metric);
    }
    return evals;
}

} // namespace ringmaster::supervisor
