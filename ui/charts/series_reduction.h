#pragma once
// What a chart hands to QCustomPlot for one series on each replot: only the visible x range, reduced
// to the smallest and the largest value of each pixel column (in index order, at their own x), so a
// spike of a single point among ten million is drawn at every zoom, and a replot costs about the same
// for 10,000 points as for 10,000,000. With few points in view (at most 2 per column) every point is
// handed over as it is. One point beyond each edge is added so the line runs to the plot's borders.
// The extremes of a column come from MinMaxColumn's pyramid (compact_series.h); keyAt(i) must not
// decrease with i (steps do not; wall times do not in practice: a clock stepped back only misplaces
// the points of that moment). Widget-free.

#include <QVector>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "ui/charts/compact_series.h"

namespace ringmaster::ui {

struct ReducedSeries
{
    QVector<double> keys, values;
};

// First index in [from, to) whose key is >= x (to when none), searching outward from `from` first
// (cheap when the answer is near, as it is from one pixel column to the next).
template <typename KeyAt>
std::size_t gallopTo(const KeyAt& keyAt, std::size_t from, std::size_t to, double x)
{
    if (from >= to || keyAt(from) >= x) return from;
    std::size_t below = from, step = 1;
    std::size_t probe = from + 1;
    while (probe < to && keyAt(probe) < x) {
        below = probe;
        step *= 2;
        probe = below + step;
    }
    std::size_t high = probe < to ? probe : to; // keyAt(high) >= x, or high == to
    std::size_t low = below + 1;               // keyAt(below) < x
    while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if (keyAt(mid) < x) low = mid + 1;
        else high = mid;
    }
    return low;
}

// The points of values[0, count) to draw for keys in [low, high] on `columns` pixel columns.
// skipNonFinite: leave out points whose value is not finite (else a column with no finite value
// hands over its first point, a NaN, which QCustomPlot draws as a gap).
template <typename KeyAt>
ReducedSeries reduceToColumns(const MinMaxColumn& values, std::size_t count, const KeyAt& keyAt, double low, double high,
                              int columns, bool skipNonFinite)
{
    ReducedSeries out;
    if (count == 0) return out;
    std::size_t first = gallopTo(keyAt, 0, count, low);
    std::size_t last = first;
    // First index whose key is > high.
    if (first < count) last = gallopTo(keyAt, first, count, std::nextafter(high, INFINITY));
    if (first > 0) --first; // one point beyond each edge
    if (last < count) ++last;
    const auto put = [&](std::size_t i) {
        const double value = values[i];
        if (skipNonFinite && !std::isfinite(value)) return;
        out.keys.append(keyAt(i));
        out.values.append(value);
    };
    if (columns <= 0 || !(high > low) || last - first <= 2 * static_cast<std::size_t>(columns)) {
        out.keys.reserve(static_cast<qsizetype>(last - first));
        out.values.reserve(out.keys.capacity());
        for (std::size_t i = first; i < last; ++i) put(i);
        return out;
    }
    out.keys.reserve(2 * columns + 4);
    out.values.reserve(2 * columns + 4);
    const double width = (high - low) / columns;
    put(first);
    const std::size_t end = last - 1;
    // The pyramid level whose blocks are at most half a column's points: a column is then a few whole
    // blocks (O(1) each) and the partial ones at the range's edges. A block that straddles two columns
    // counts in the first; its extremes are still drawn at their own x.
    const std::size_t perColumn = (end - first) / static_cast<std::size_t>(columns);
    std::size_t level = 0;
    bool blocks = values.levels() > 0 && perColumn >= 2 * MinMaxColumn::blockSize(0);
    while (blocks && level + 1 < values.levels() && 2 * MinMaxColumn::blockSize(level + 1) <= perColumn) ++level;
    const std::size_t span = MinMaxColumn::blockSize(level);
    std::size_t i = first + 1;
    double column = std::floor((keyAt(i) - low) / width);
    std::size_t lowest = MinMaxColumn::kNone, highest = MinMaxColumn::kNone, columnStart = i;
    const auto flushColumn = [&] {
        if (lowest == MinMaxColumn::kNone) {
            put(columnStart);
        } else if (lowest == highest) {
            put(lowest);
        } else {
            put(std::min(lowest, highest));
            put(std::max(lowest, highest));
        }
        lowest = highest = MinMaxColumn::kNone;
    };
    while (i < end) {
        // The next unit: a whole block when i starts one, else up to the next block boundary (or the
        // next column's first point, when not using blocks).
        std::size_t next;
        std::pair<std::size_t, std::size_t> found;
        if (blocks && i % span == 0 && i + span <= end && i / span < values.blockCount(level)) {
            next = i + span;
            found = values.blockExtremes(level, i / span);
        } else {
            next = blocks ? std::min(end, (i / span + 1) * span)
                          : std::max(i + 1, gallopTo(keyAt, i, end, low + (column + 1) * width));
            found = values.extremes(i, next);
        }
        if (found.first != MinMaxColumn::kNone) {
            if (lowest == MinMaxColumn::kNone || values[found.first] < values[lowest]) lowest = found.first;
            if (highest == MinMaxColumn::kNone || values[found.second] > values[highest]) highest = found.second;
        }
        i = next;
        if (i >= end) break;
        const double nextColumn = std::floor((keyAt(i) - low) / width);
        if (nextColumn != column) {
            flushColumn();
            column = nextColumn;
            columnStart = i;
        }
    }
    flushColumn();
    if (end > first) put(end);
    return out;
}

} // namespace ringmaster::ui
