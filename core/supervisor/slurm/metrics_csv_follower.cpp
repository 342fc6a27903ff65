#include "metrics_csv_follower.h"

#include <cmath>

namespace ringmaster::supervisor {
namespace {

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
    : m_metrics(runDir + QStringLiteral("/metrics.csv"))
    , m_eval(runDir + QStringLiteral("/eval.csv"))
{
}

QList<StepMetric> MetricsCsvFollower::pollSteps()
{
    QList<StepMetric> steps;
    for (const QString& line : m_metrics.poll()) {
        const QStringList values = line.split(QLatin1Char(','));
        if (line.startsWith(QLatin1String("step,"))) {
            m_metricsColumns = values;
            continue;
        }
        if (m_metricsColumns.isEmpty()) continue;
        StepMetric metric;
        metric.step = static_cast<qint64>(field(m_metricsColumns, values, "step", -1));
        metric.epoch = static_cast<qint64>(field(m_metricsColumns, values, "epoch", 0));
        metric.loss = field(m_metricsColumns, values, "loss");
        metric.lr = field(m_metricsColumns, values, "lr");
        metric.samplesPerSec = field(m_metricsColumns, values, "samples_per_sec");
        metric.wallTime = field(m_metricsColumns, values, "wall_time", 0);
        if (metric.step >= 0) steps.append(metric);
    }
    return steps;
}

QList<EvalMetric> MetricsCsvFollower::pollEvals()
{
    QList<EvalMetric> evals;
    for (const QString& line : m_eval.poll()) {
        const QStringList values = line.split(QLatin1Char(','));
        if (line.startsWith(QLatin1String("epoch,"))) {
            m_evalColumns = values;
            continue;
        }
        if (m_evalColumns.isEmpty()) continue;
        EvalMetric metric;
        metric.epoch = static_cast<qint64>(field(m_evalColumns, values, "epoch", 0));
        metric.step = static_cast<qint64>(field(m_evalColumns, values, "step", -1));
        metric.valLoss = field(m_evalColumns, values, "val_loss");
        metric.valAccuracy = field(m_evalColumns, values, "val_accuracy");
        if (metric.step >= 0) evals.append(metric);
    }
    return evals;
}

} // namespace ringmaster::supervisor
