#include "ui/charts/scalar_series.h"

#include <QSet>

#include <algorithm>
#include <cmath>
#include <limits>

namespace ringmaster::ui {
namespace {

// Separates the run label from the name in a key: a control character, which no scalar name has
// (the supervisor refuses names with control characters).
constexpr QChar kKeySeparator(0x1f);

} // namespace

ScalarSeriesStore::ScalarSeriesStore(std::size_t maxPointsPerSeries)
{
    setMaxPointsPerSeries(maxPointsPerSeries);
}

QString ScalarSeriesStore::panelOf(const QString& name)
{
    const qsizetype slash = name.indexOf(QLatin1Char('/'));
    return slash > 0 ? name.left(slash) : kUngroupedPanel;
}

QString ScalarSeriesStore::keyOf(const QString& run, const QString& name)
{
    return run + kKeySeparator + name;
}

bool ScalarSeriesStore::add(const QString& run, const QString& name, qint64 step, double wallTime, double value)
{
    const QString key = keyOf(run, name);
    auto it = m_series.find(key);
    if (it == m_series.end()) {
        if (m_series.size() >= kMaxSeries) {
            ++m_refused;
            return false;
        }
        it = m_series.emplace(key, ScalarSeries{}).first;
        it->second.run = run;
        it->second.name = name;
        m_firstWall.emplace(run, wallTime); // kept when the run already has one
    }
    ScalarSeries& series = it->second;
    // Every point from this step on belongs to the attempt that was abandoned (as TensorBoard purges
    // "out of order" steps after a restart).
    if (series.arrivals > 0 && step < lastStep(series)) dropAfter(&series, step - 1);
    ++series.arrivals;
    const ScalarPoint point{step, wallTime, value};
    if (series.level == 0) push(&series, point);
    else gather(&series, point);
    if (series.size() > m_maxPoints) decimate(&series); // never more than the bound once add() returns
    return true;
}

void ScalarSeriesStore::push(ScalarSeries* series, const ScalarPoint& point)
{
    series->steps.push_back(point.step);
    series->walls.push_back(point.wall);
    series->values.push_back(point.value);
    track(series, static_cast<float>(point.value));
}

void ScalarSeriesStore::gather(ScalarSeries* series, const ScalarPoint& point)
{
    ScalarSeries::Group& group = series->group;
    if (group.count == 0) group.first = point;
    group.last = point;
    ++group.count;
    // float32, as stored: the extremes are chosen among the values as they will be drawn.
    const float value = static_cast<float>(point.value);
    if (std::isfinite(value)) {
        if (!group.hasFinite || value < static_cast<float>(group.lowest.value)) group.lowest = point;
        if (!group.hasFinite || value >= static_cast<float>(group.highest.value)) group.highest = point;
        group.hasFinite = true;
    }
    if (group.count < (qint64(1) << (series->level + 1))) return;
    if (!group.hasFinite) {
        push(series, group.first);
        push(series, group.last);
    } else if (group.lowest.step <= group.highest.step) { // arrival order (steps do not go back)
        push(series, group.lowest);
        push(series, group.highest);
    } else {
        push(series, group.highest);
        push(series, group.lowest);
    }
    group = ScalarSeries::Group{};
}

void ScalarSeriesStore::decimate(ScalarSeries* series)
{
    // Min/max pairs: of every 4 consecutive points the smallest and the largest (in their order).
    StepColumn steps;
    WallColumn walls;
    MinMaxColumn values;
    const std::size_t count = series->size();
    for (std::size_t first = 0; first < count; first += 4) {
        const std::size_t last = std::min(first + 4, count);
        auto [lowest, highest] = series->values.extremes(first, last);
        if (lowest == MinMaxColumn::kNone) {
            lowest = first;
            highest = last - 1;
        }
        for (const std::size_t i : {std::min(lowest, highest), std::max(lowest, highest)}) {
            steps.push_back(series->steps[i]);
            walls.push_back(series->walls[i]);
            values.push_back(series->values[i]);
            if (lowest == highest) break;
        }
    }
    series->steps = std::move(steps);
    series->walls = std::move(walls);
    series->values = std::move(values);
    ++series->level;
    ++series->version;
    recomputeExtremes(series);
}

qint64 ScalarSeriesStore::lastStep(const ScalarSeries& series)
{
    if (series.group.count > 0) return series.group.last.step;
    return series.size() > 0 ? series.steps[series.size() - 1] : std::numeric_limits<qint64>::min();
}

QStringList ScalarSeriesStore::truncateAfter(const QString& run, qint64 step)
{
    QStringList changed;
    for (auto& [key, series] : m_series) {
        if (series.run == run && dropAfter(&series, step)) changed << key;
    }
    return changed;
}

bool ScalarSeriesStore::dropAfter(ScalarSeries* series, qint64 step)
{
    // The group being gathered: dropped whole when it reaches past `step` (its inner points are gone).
    bool dropped = false;
    if (series->group.count > 0 && series->group.last.step > step) {
        series->group = ScalarSeries::Group{};
        dropped = true;
    }
    // Steps never decrease within a series: the first point past `step` by binary search.
    std::size_t low = 0, high = series->size();
    while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if (series->steps[mid] <= step) low = mid + 1;
        else high = mid;
    }
    if (low == series->size()) return dropped;
    series->steps.truncate(low);
    series->walls.truncate(low);
    series->values.truncate(low);
    ++series->version;
    recomputeExtremes(series);
    return true;
}

void ScalarSeriesStore::clear()
{
    m_series.clear();
    m_firstWall.clear();
    m_refused = 0;
}

const ScalarSeries* ScalarSeriesStore::find(const QString& key) const
{
    const auto it = m_series.find(key);
    return it == m_series.end() ? nullptr : &it->second;
}

QStringList ScalarSeriesStore::names() const
{
    QSet<QString> seen;
    QStringList names;
    for (const auto& [key, series] : m_series) {
        if (!seen.contains(series.name)) {
            seen.insert(series.name);
            names << series.name;
        }
    }
    names.sort();
    return names;
}

double ScalarSeriesStore::firstWallTime(const QString& run) const
{
    const auto it = m_firstWall.find(run);
    return it == m_firstWall.end() ? 0.0 : it->second;
}

std::size_t ScalarSeriesStore::memoryBytes() const
{
    std::size_t bytes = 0;
    for (const auto& [key, series] : m_series) bytes += series.memoryBytes();
    return bytes;
}

std::size_t ScalarSeriesStore::pointCount() const
{
    std::size_t points = 0;
    for (const auto& [key, series] : m_series) points += series.size();
    return points;
}

void ScalarSeriesStore::track(ScalarSeries* series, double value)
{
    if (!std::isfinite(value)) return;
    if (!series->hasFinite) {
        series->low = series->high = value;
        series->hasFinite = true;
    } else {
        series->low = std::min(series->low, value);
        series->high = std::max(series->high, value);
    }
    if (value > 0) {
        series->lowPositive = series->hasPositive ? std::min(series->lowPositive, value) : value;
        series->hasPositive = true;
    }
}

void ScalarSeriesStore::recomputeExtremes(ScalarSeries* series)
{
    series->hasFinite = series->hasPositive = false;
    const auto [lowest, highest] = series->values.extremes(0, series->size());
    if (lowest == MinMaxColumn::kNone) return;
    series->low = series->values[lowest];
    series->high = series->values[highest];
    series->hasFinite = true;
    if (series->high <= 0) return;
    if (series->low > 0) {
        series->lowPositive = series->low;
        series->hasPositive = true;
        return;
    }
    for (std::size_t i = 0; i < series->size(); ++i) track(series, series->values[i]); // mixed signs: a scan
}

} // namespace ringmaster::ui
