#include "ui/charts/system_series.h"

#include <algorithm>

#include "protocol/run_layout.h"

namespace ringmaster::ui {

void SystemSeries::add(double wallTime, int rank, const QString& name, double value)
{
    if (m_start < 0) m_start = wallTime;
    Points& points = m_series[name][rank];
    points.seconds.append(wallTime - m_start);
    points.values.append(value);
    if (points.seconds.size() > kMaxPointsPerSeries) {
        Points halved;
        for (qsizetype i = 0; i < points.seconds.size(); i += 2) {
            halved.seconds.append(points.seconds[i]);
            halved.values.append(points.values[i]);
        }
        points = std::move(halved);
    }
}

void SystemSeries::append(const QList<supervisor::SystemSample>& samples)
{
    for (const supervisor::SystemSample& sample : samples) add(sample.wallTime, sample.rank, sample.name, sample.value);
}

void SystemSeries::appendRecords(const QList<runs::ScalarRecord>& records)
{
    const QString prefix = QString::fromLatin1(protocol::kSystemSeriesPrefix);
    for (const runs::ScalarRecord& record : records) {
        if (!record.name.startsWith(prefix) || !record.wallTime) continue;
        const QString rest = record.name.mid(prefix.size());  // "3/cpu_percent"
        bool number = false;
        const int rank = rest.section(QLatin1Char('/'), 0, 0).toInt(&number);
        const QString name = rest.section(QLatin1Char('/'), 1);
        if (number && rank >= 0 && !name.isEmpty()) add(*record.wallTime, rank, name, record.value);
    }
}

void SystemSeries::clear()
{
    m_series.clear();
    m_start = -1.0;
}

SystemSeries::Band SystemSeries::band(const QString& name) const
{
    QMap<double, QVector<double>> ticks; // by time: every rank's value at that tick
    const auto ranks = m_series.value(name);
    for (auto it = ranks.cbegin(); it != ranks.cend(); ++it) {
        for (qsizetype i = 0; i < it->seconds.size(); ++i) ticks[it->seconds[i]].append(it->values[i]);
    }
    Band band;
    for (auto it = ticks.begin(); it != ticks.end(); ++it) {
        QVector<double>& values = it.value();
        if (values.size() < 2) continue;
        std::sort(values.begin(), values.end());
        const qsizetype middle = values.size() / 2;
        band.seconds.append(it.key());
        band.least.append(values.first());
        band.most.append(values.last());
        band.median.append(values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2.0);
    }
    return band;
}

} // namespace ringmaster::ui
