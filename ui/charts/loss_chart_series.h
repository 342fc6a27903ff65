#pragma once
// The points behind the Training tab's chart (LossChart), without any widget: per step its step, epoch,
// wall time, loss and learning rate, and the loss smoothed (DebiasedEma). Stored as the All scalars chart
// stores its series (compact_series.h), so a run of 1,000,000 steps holds 19.4 bytes a point (23.5 when
// steps are not evenly spaced; memoryBytes()) instead of the ~220 of doubles in QCustomPlot's containers:
// steps implicit while evenly spaced, wall times and values as float32 (a double is rounded to the
// nearest float32), min/max pyramids over the loss, the smoothed loss and the learning rate for the
// per-pixel reduction (series_reduction.h), and epochs as runs of equal values (an epoch is thousands of steps).
// A step that goes back is not checked here: LossChart truncates (truncateAfter) when a restart resumes.

#include <QtGlobal>

#include <cstddef>
#include <limits>
#include <vector>

#include "ui/charts/compact_series.h"
#include "ui/charts/debiased_ema.h"

namespace ringmaster::ui {

class LossChartSeries
{
public:
    enum class Axis { Step, Epoch, WallTime };

    // Adds one step. STEPS_PER_EPOCH > 0 makes its epoch coordinate step / STEPS_PER_EPOCH, else EPOCH.
    void append(qint64 step, qint64 epoch, qint64 stepsPerEpoch, double wallTime, double loss, double lr);
    // Keeps the points up to STEP (inclusive); true when any was dropped.
    bool truncateAfter(qint64 step);
    void clear();
    // Recomputes the smoothed line with this weight (0 .. DebiasedEma::kMaxWeight).
    void setSmoothing(double weight);
    double smoothing() const { return m_ema.weight(); }

    std::size_t size() const { return m_losses.size(); }
    qint64 step(std::size_t i) const { return m_steps[i]; }
    double epoch(std::size_t i) const;
    double wall(std::size_t i) const { return m_walls[i]; }
    double loss(std::size_t i) const { return m_losses[i]; }
    double lr(std::size_t i) const { return m_lrs[i]; }
    // NaN where the loss is not finite (the smoothing skips it).
    double smoothed(std::size_t i) const { return m_smoothed[i]; }
    std::size_t smoothedCount() const { return m_finiteLosses; }
    // The x of point i on AXIS (non-decreasing in i).
    double key(Axis axis, std::size_t i) const;
    // The first index whose step is > STEP (size() when none).
    std::size_t upperBound(qint64 step) const;

    const MinMaxColumn& losses() const { return m_losses; }
    const MinMaxColumn& smoothedLine() const { return m_smoothed; }
    const MinMaxColumn& lrs() const { return m_lrs; }

    // Extremes of the finite losses and the largest learning rate (0 when none).
    bool hasLoss() const { return m_lossHigh >= m_lossLow; }
    double lossLow() const { return m_lossLow; }
    double lossHigh() const { return m_lossHigh; }
    double lrPeak() const { return m_lrPeak; }

    // Bytes held by the points (columns, pyramids and epoch runs, with their spare capacity).
    std::size_t memoryBytes() const;

private:
    struct EpochRun
    {
        std::size_t first;      // index of its first point
        qint64 epoch;           // as reported
        qint64 stepsPerEpoch;   // as known when it arrived (0: unknown)
    };

    void smoothFrom(std::size_t first);
    void recomputeExtremes();

    StepColumn m_steps;
    WallColumn m_walls;
    MinMaxColumn m_losses, m_lrs, m_smoothed;
    std::vector<EpochRun> m_epochs;
    std::size_t m_finiteLosses = 0;
    DebiasedEma m_ema;
    double m_lossLow = std::numeric_limits<double>::infinity();
    double m_lossHigh = -std::numeric_limits<double>::infinity();
    double m_lrPeak = 0.0;
};

} // namespace ringmaster::ui
