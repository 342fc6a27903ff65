#include "ui/charts/loss_chart_series.h"

#include <algorithm>
#include <cmath>

namespace ringmaster::ui {

void LossChartSeries::append(qint64 step, qint64 epoch, qint64 stepsPerEpoch, double wallTime, double loss, double lr)
{
    const std::size_t index = size();
    if (m_epochs.empty() || m_epochs.back().epoch != epoch || m_epochs.back().stepsPerEpoch != stepsPerEpoch) {
        m_epochs.push_back({index, epoch, stepsPerEpoch});
    }
    m_steps.push_back(step);
    m_walls.push_back(wallTime);
    m_losses.push_back(loss);
    m_lrs.push_back(lr);
    // The extremes of the values as stored (float32), as drawn.
    const double stored = m_losses[index];
    if (std::isfinite(stored)) {
        m_lossLow = std::min(m_lossLow, stored);
        m_lossHigh = std::max(m_lossHigh, stored);
    }
    const double storedLr = m_lrs[index];
    if (std::isfinite(storedLr)) m_lrPeak = std::max(m_lrPeak, storedLr);
    smoothFrom(index);
}

void LossChartSeries::smoothFrom(std::size_t first)
{
    for (std::size_t i = first; i < size(); ++i) {
        const double value = m_losses[i];
        if (std::isfinite(value)) {
            m_smoothed.push_back(m_ema.add(value));
            ++m_finiteLosses;
        } else {
            m_smoothed.push_back(std::numeric_limits<double>::quiet_NaN());
        }
    }
}

void LossChartSeries::setSmoothing(double weight)
{
    m_ema.setWeight(weight);
    m_smoothed.clear();
    m_finiteLosses = 0;
    smoothFrom(0);
}

double LossChartSeries::epoch(std::size_t i) const
{
    // The run of epochs holding i: the last one that starts at or before it.
    const auto run = std::upper_bound(m_epochs.begin(), m_epochs.end(), i, [](std::size_t index, const EpochRun& r) { return index < r.first; }) - 1;
    return run->stepsPerEpoch > 0 ? static_cast<double>(m_steps[i]) / static_cast<double>(run->stepsPerEpoch) : static_cast<double>(run->epoch);
}

double LossChartSeries::key(Axis axis, std::size_t i) const
{
    switch (axis) {
    case Axis::Epoch: return epoch(i);
    case Axis::WallTime: return m_walls[i];
    case Axis::Step: break;
    }
    return static_cast<double>(m_steps[i]);
}

std::size_t LossChartSeries::upperBound(qint64 step) const
{
    std::size_t low = 0, high = size();
    while (low < high) {
        const std::size_t mid = low + (high - low) / 2;
        if (m_steps[mid] <= step) low = mid + 1;
        else high = mid;
    }
    return low;
}

bool LossChartSeries::truncateAfter(qint64 step)
{
    const std::size_t keep = upperBound(step);
    if (keep == size()) return false;
    m_steps.truncate(keep);
    m_walls.truncate(keep);
    m_losses.truncate(keep);
    m_lrs.truncate(keep);
    while (!m_epochs.empty() && m_epochs.back().first >= keep) m_epochs.pop_back();
    recomputeExtremes();
    // The smoothed line again from the first point (the average's state at `keep` is not kept).
    setSmoothing(m_ema.weight());
    return true;
}

void LossChartSeries::recomputeExtremes()
{
    m_lossLow = std::numeric_limits<double>::infinity();
    m_lossHigh = -std::numeric_limits<double>::infinity();
    m_lrPeak = 0.0;
    const auto [lowest, highest] = m_losses.extremes(0, size());
    if (lowest != MinMaxColumn::kNone) {
        m_lossLow = m_losses[lowest];
        m_lossHigh = m_losses[highest];
    }
    const auto lrHighest = m_lrs.extremes(0, size()).second;
    if (lrHighest != MinMaxColumn::kNone) m_lrPeak = std::max(0.0, m_lrs[lrHighest]);
}

void LossChartSeries::clear()
{
    m_steps.clear();
    m_walls.clear();
    m_losses.clear();
    m_lrs.clear();
    m_smoothed.clear();
    m_epochs.clear();
    m_epochs.shrink_to_fit();
    m_finiteLosses = 0;
    m_ema.reset();
    recomputeExtremes();
}

std::size_t LossChartSeries::memoryBytes() const
{
    return m_steps.memoryBytes() + m_walls.memoryBytes() + m_losses.memoryBytes() + m_lrs.memoryBytes() + m_smoothed.memoryBytes() +
           m_epochs.capacity() * sizeof(EpochRun);
}

} // namespace ringmaster::ui
