#pragma once
// The points behind ScalarChart, without any widget: one series per (run, scalar name), each point its
// step, its wall time (Unix seconds, taken when it arrived, as in RUN_DIR/scalars.csv) and its value.
// A run label keys the series so several runs can be drawn overlaid (the live run's label is empty).
// Names are grouped into panels by their prefix: the part before the first '/' ("train/loss" and
// "train/acc" share panel "train"; "loss" goes to the panel kUngroupedPanel).
//
// Storage (compact_series.h): values as float32 (a double is rounded to the nearest float32), steps
// implicit while evenly spaced (else 4 bytes), wall times as float32 seconds from the series' first,
// and a min/max pyramid over the values for drawing (series_reduction.h): 8.5 to 13 bytes a point
// (memoryBytes()).
// Bounds: at most maxPointsPerSeries points per series (kDefaultMaxPointsPerSeries, 10,000,000,
// unless given). Overflow policy "min/max pairs": a full series is halved by keeping, of every 4
// consecutive points, the smallest and the largest value (in their order, with their own step and
// wall time); from then on each 2^(level+1) arrivals are kept as their smallest and largest (the last
// incomplete group is not stored until it completes), so a spike is never dropped, only the points
// between extremes. At most kMaxSeries series: values of further names are refused and counted
// (refusedValues()).
// A step that goes back (a script restarted and resumed from an earlier checkpoint, or a resumed run) replaces
// that series' points from that step on, as TensorBoard purges out-of-order steps; scalars.csv keeps them all.

#include <QString>
#include <QStringList>
#include <QtGlobal>

#include <cstddef>
#include <map>

#include "ui/charts/compact_series.h"

namespace ringmaster::ui {

struct ScalarPoint
{
    qint64 step = 0;
    double wall = 0.0;
    double value = 0.0;
};

struct ScalarSeries
{
    QString run;  // "" for the live run
    QString name;
    StepColumn steps;
    WallColumn walls;
    MinMaxColumn values;
    // Decimation level: 0 keeps every arrival; at level L (L >= 1) each group of 2^(L+1) arrivals is
    // kept as its smallest and its largest value.
    int level = 0;
    // The group being gathered at level >= 1 (its first, smallest and largest arrival).
    struct Group
    {
        qint64 count = 0;
        ScalarPoint first, lowest, highest, last;
        bool hasFinite = false;
    } group;
    qint64 arrivals = 0; // values offered, kept or not
    // Extremes of the finite values kept (lowPositive: the smallest above 0, for a log axis).
    double low = 0.0, high = 0.0, lowPositive = 0.0;
    bool hasFinite = false, hasPositive = false;
    int version = 0;     // bumped when kept points change other than by appending (decimation, truncation)

    std::size_t size() const { return values.size(); }
    qint64 step(std::size_t i) const { return steps[i]; }
    double wall(std::size_t i) const { return walls[i]; }
    double value(std::size_t i) const { return values[i]; }
    // Bytes held by the points (the columns and the pyramid, with their spare capacity).
    std::size_t memoryBytes() const { return steps.memoryBytes() + walls.memoryBytes() + values.memoryBytes(); }
};

class ScalarSeriesStore
{
public:
    static constexpr std::size_t kDefaultMaxPointsPerSeries = 10000000;
    static constexpr std::size_t kMaxSeries = 256;
    static inline const QString kUngroupedPanel = QStringLiteral("scalars");

    explicit ScalarSeriesStore(std::size_t maxPointsPerSeries = kDefaultMaxPointsPerSeries);

    // "train/loss" -> "train"; "loss" (or "/loss") -> kUngroupedPanel.
    static QString panelOf(const QString& name);
    // The key of one run's scalar (unique, not meant for display).
    static QString keyOf(const QString& run, const QString& name);

    // Adds one point; false when refused (a new series past kMaxSeries). A point gathered into a
    // decimation group still counts as accepted.
    bool add(const QString& run, const QString& name, qint64 step, double wallTime, double value);
    // Drops the run's points after `step` (a restart resumed from a checkpoint there); the keys of the
    // series that changed.
    QStringList truncateAfter(const QString& run, qint64 step);
    void clear();
    // Changes the bound (tests use a small one); series already longer are decimated at their next point.
    void setMaxPointsPerSeries(std::size_t limit) { m_maxPoints = limit < 8 ? 8 : limit; }
    std::size_t maxPointsPerSeries() const { return m_maxPoints; }

    const ScalarSeries* find(const QString& key) const;
    const std::map<QString, ScalarSeries>& series() const { return m_series; }
    // Distinct names over every run, sorted.
    QStringList names() const;
    // The wall time of the run's first point (the origin of a wall-time axis); 0 before any.
    double firstWallTime(const QString& run) const;
    qint64 refusedValues() const { return m_refused; }
    // Bytes held by every series' points, and the points kept.
    std::size_t memoryBytes() const;
    std::size_t pointCount() const;

private:
    static void push(ScalarSeries* series, const ScalarPoint& point);
    static void gather(ScalarSeries* series, const ScalarPoint& point);
    static void decimate(ScalarSeries* series);
    // Drops the points after `step`; true when any was dropped.
    static bool dropAfter(ScalarSeries* series, qint64 step);
    static void recomputeExtremes(ScalarSeries* series);
    static void track(ScalarSeries* series, double value);
    static qint64 lastStep(const ScalarSeries& series);

    std::size_t m_maxPoints;
    std::map<QString, ScalarSeries> m_series;
    std::map<QString, double> m_firstWall;
    qint64 m_refused = 0;
};

} // namespace ringmaster::ui
