#include "scalar_series.h"

#include <QSet>

#include <algorithm>
#include <cmath>

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
    if (!series.steps.empty() && static_cast<double>(step) < series.steps.back()) rewind(&series, step);
    const bool kept = series.arrivals % series.stride == 0;
    ++series.arrivals;
    if (!kept) return true;
    if (series.size() >= m_maxPoints) {
        thin(&series);
        // The stride doubled: this arrival is kept only when it falls on the new grid.
        if ((series.arrivals - 1) % series.stride != 0) return true;
    }
    series.steps.push_back(static_cast<double>(step));
    series.walls.push_back(wallTime);
    series.values.push_back(value);
    track(&series, value);
    return true;
}

void ScalarSeriesStore::thin(ScalarSeries* series)
{
    std::size_t kept = 0;
    for (std::size_t i = 0; i < series->size(); i += 2, ++kept) {
        series->steps[kept] = series->steps[i];
        series->walls[kept] = series->walls[i];
        series->values[kept] = series->values[i];
    }
    series->steps.resize(kept);
    series->walls.resize(kept);
    series->values.resize(kept);
    series->stride *= 2;
    ++series->version;
    recomputeExtremes(series);
}

QStringList ScalarSeriesStore::truncateAfter(const QString& run, qint64 step)
{
    QStringList changed;
    for (auto& [key, series] : m_series) {
        if (series.run == run && dropAfter(&series, static_cast<double>(step))) changed << key;
    }
    return changed;
}

bool ScalarSeriesStore::dropAfter(ScalarSeries* series, double step)
{
    std::size_t kept = 0;
    for (std::size_t i = 0; i < series->size(); ++i) {
        if (series->steps[i] > step) continue;
        series->steps[kept] = series->steps[i];
        series->walls[kept] = series->walls[i];
        series->values[kept] = series->values[i];
        ++kept;
    }
    if (kept == series->size()) return false;
    series->steps.resize(kept);
    series->walls.resize(kept);
    series->values.resize(kept);
    series->arrivals = static_cast<qint64>(kept) * series->stride; // the next arrival lands on the grid
    ++series->version;
    recomputeExtremes(series);
    return true;
}

void ScalarSeriesStore::rewind(ScalarSeries* series, qint64 step)
{
    // Every point from this step on belongs to the attempt that was abandoned (as TensorBoard purges
    // "out of order" steps after a restart).
    dropAfter(series, static_cast<double>(step) - 1.0);
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
    for (const double value : series->values) track(series, value);
}

} // namespace ringmaster::ui
