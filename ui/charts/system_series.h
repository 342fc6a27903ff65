#pragma once
// What every rank used over a run, for the System panel (system_panel.h), without widgets: the samples of
// core/supervisor/system_sampler.h by metric name and rank, x the seconds since the run's first sample, and for
// each tick the least, median and largest value across ranks (the samples of one tick share its wall time).
// Filled live from RunSupervisor::systemSampled, or from a finished run's system.csv (core/runs system_table.h,
// whose series are named system/rank<R>/<name>). A series keeps at most kMaxPointsPerSeries points: past that,
// every other point goes (a week at one sample per 2 s is 302,400 ticks).

#include <QHash>
#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>
#include <QVector>

#include "supervisor/run_types.h"
#include "runs/scalar_table.h"

namespace ringmaster::ui {

class SystemSeries
{
public:
    static constexpr int kMaxPointsPerSeries = 100000;

    struct Points
    {
        QVector<double> seconds; // since the first sample of the run
        QVector<double> values;
    };
    struct Band
    {
        QVector<double> seconds;
        QVector<double> least, median, most;
    };

    void append(const QList<supervisor::SystemSample>& samples);
    // A finished run's system.csv as runs::readRunSystem reads it; other records are ignored.
    void appendRecords(const QList<runs::ScalarRecord>& records);
    void clear();

    bool isEmpty() const { return m_series.isEmpty(); }
    QStringList names() const { return m_series.keys(); } // sorted
    QList<int> ranks(const QString& name) const { return m_series.value(name).keys(); }
    Points points(const QString& name, int rank) const { return m_series.value(name).value(rank); }
    // Across the ranks, at each tick where at least two ranks have a value of NAME (empty with fewer ranks).
    Band band(const QString& name) const;

private:
    void add(double wallTime, int rank, const QString& name, double value);

    double m_start = -1.0;
    QMap<QString, QMap<int, Points>> m_series;
};

} // namespace ringmaster::ui
