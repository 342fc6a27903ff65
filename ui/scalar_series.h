#pragma once
// The points behind ScalarChart, without any widget: one series per (run, scalar name), each point its
// step, its wall time (Unix seconds, taken when it arrived, as in RUN_DIR/scalars.csv) and its value.
// A run label keys the series so several runs can later be drawn overlaid (the live run's label is
// empty). Names are grouped into panels by their prefix: the part before the first '/' ("train/loss"
// and "train/acc" share panel "train"; "loss" goes to the panel kUngroupedPanel).
//
// Bounds: at most maxPointsPerSeries points per series (kDefaultMaxPointsPerSeries unless given). A
// full series is thinned: every second point is dropped (the first is kept) and from then on only every
// 2nd arrival is kept (then every 4th, ...), so the whole run stays drawn at a uniform, coarser
// resolution and memory stays below ~24 bytes x the limit per series. At most kMaxSeries series:
// values of further names are refused and counted (refusedValues()).
// A step that goes back (a script restarted and resumed from an earlier checkpoint, or a resumed run) replaces
// that series' points from that step on, as TensorBoard purges out-of-order steps; scalars.csv keeps them all.

#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <cstddef>
#include <map>
#include <vector>

namespace ringmaster::ui {

struct ScalarSeries
{
    QString run;  // "" for the live run
    QString name;
    std::vector<double> steps, walls, values;
    qint64 stride = 1;   // keeps one arrival in `stride` (doubles at each thinning)
    qint64 arrivals = 0; // values offered, kept or not
    // Extremes of the finite values kept (lowPositive: the smallest above 0, for a log axis).
    double low = 0.0, high = 0.0, lowPositive = 0.0;
    bool hasFinite = false, hasPositive = false;
    int version = 0;     // bumped when kept points change other than by appending (thinning, truncation)

    std::size_t size() const { return values.size(); }
};

class ScalarSeriesStore
{
public:
    static constexpr std::size_t kDefaultMaxPointsPerSeries = 100000;
    static constexpr std::size_t kMaxSeries = 256;
    static inline const QString kUngroupedPanel = QStringLiteral("scalars");

    explicit ScalarSeriesStore(std::size_t maxPointsPerSeries = kDefaultMaxPointsPerSeries);

    // "train/loss" -> "train"; "loss" (or "/loss") -> kUngroupedPanel.
    static QString panelOf(const QString& name);
    // The key of one run's scalar (unique, not meant for display).
    static QString keyOf(const QString& run, const QString& name);

    // Adds one point; false when refused (a new series past kMaxSeries). A point skipped by the
    // thinning stride still counts as accepted.
    bool add(const QString& run, const QString& name, qint64 step, double wallTime, double value);
    // Drops the run's points after `step` (a restart resumed from a checkpoint there); the keys of the
    // series that changed.
    QStringList truncateAfter(const QString& run, qint64 step);
    void clear();
    // Changes the bound (tests use a small one); series already longer are thinned at their next point.
    void setMaxPointsPerSeries(std::size_t limit) { m_maxPoints = limit < 2 ? 2 : limit; }
    std::size_t maxPointsPerSeries() const { return m_maxPoints; }

    const ScalarSeries* find(const QString& key) const;
    const std::map<QString, ScalarSeries>& series() const { return m_series; }
    // Distinct names over every run, sorted.
    QStringList names() const;
    // The wall time of the run's first point (the origin of a wall-time axis); 0 before any.
    double firstWallTime(const QString& run) const;
    qint64 refusedValues() const { return m_refused; }

private:
    static void thin(ScalarSeries* series);
    // Drops the points after `step`; true when any was dropped.
    static bool dropAfter(ScalarSeries* series, double step);
    static void rewind(ScalarSeries* series, qint64 step);
    static void recomputeExtremes(ScalarSeries* series);
    static void track(ScalarSeries* series, double value);

    std::size_t m_maxPoints;
    std::map<QString, ScalarSeries> m_series;
    std::map<QString, double> m_firstWall;
    qint64 m_refused = 0;
};

} // namespace ringmaster::ui
