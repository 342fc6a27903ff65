#pragma once
// The live training chart: loss per step (raw, faint) with an EMA-smoothed line (debiased, as
// TensorBoard does), validation loss and accuracy per evaluation (accuracy on the right axis), and
// the learning rate on its own small plot. x by step, epoch or wall time; log scale; zoom/pan; fit;
// a crosshair tooltip with the exact values (as stored: float32).
// Metrics arrive through append(); they are buffered (at most kMaxPendingMetrics: reaching it drains at
// once) and drained by a coalescing timer (~33 ms) into one queued replot, so a fast run never stalls
// the UI. Every step is kept, compactly (LossChartSeries: about 19 bytes a point), and drawn as the All
// scalars chart draws: on each drain, zoom, pan, resize or replot only the visible x range is handed to
// QCustomPlot, reduced to each pixel column's smallest and largest value (series_reduction.h), so a
// one-step spike among a million is drawn at every zoom and a replot costs about the same at 10,000
// points as at 1,000,000. Evaluations (one per epoch or so) are handed over whole.

#include <QTimer>
#include <QVector>
#include <QWidget>

#include <vector>

#include "ui/charts/loss_chart_series.h"
#include "supervisor/run_types.h"

class QCPGraph;
class QCPItemStraightLine;
class QCustomPlot;

namespace ringmaster::ui {

class ChartControls;

class LossChart : public QWidget
{
    Q_OBJECT

public:
    enum class XAxis { Step, Epoch, WallTime };
    static constexpr std::size_t kMaxPendingMetrics = 50000;

    explicit LossChart(QWidget* parent = nullptr);

    void clear();
    void setStepsPerEpoch(qint64 steps) { m_stepsPerEpoch = steps; }
    void append(const supervisor::StepMetric& metric);
    void appendEval(const supervisor::EvalMetric& metric);
    // Drains the buffer now (the timer does this every ~33 ms).
    void flush();
    // Forgets every point after this step (a restart resumed from a checkpoint there).
    void truncateAfter(qint64 step);

    void setXAxis(XAxis axis);
    void setSmoothing(double weight); // 0 .. 0.999
    void setLogScale(bool on);
    void fit();

    // Steps kept; smoothed values kept (the finite losses); evaluations kept.
    int lossPointCount() const;
    int smoothedPointCount() const;
    int evalPointCount() const;
    // Points handed to the raw loss graph for the visible range (after the per-pixel reduction).
    int drawnPointCount() const;
    // The smoothed values of every kept step with a finite loss, in double from the stored values.
    QVector<double> smoothedValues() const;
    const LossChartSeries& series() const { return m_series; }
    QCustomPlot* plot() const { return m_plot; }

Q_SIGNALS:
    // Emitted after each drain with the newest step, for progress displays.
    void drained(const ringmaster::supervisor::StepMetric& latest);

private:
    // What a graph was last handed, to skip a reduction when nothing changed.
    struct Handed
    {
        double low = 0, high = 0;
        int columns = 0;
        std::size_t size = 0;
        int version = -1;
    };

    double evalKey(std::size_t index) const;
    LossChartSeries::Axis seriesAxis() const { return static_cast<LossChartSeries::Axis>(m_xAxis); }
    void drain();
    void redrawEvals();
    // Hands the visible range of the loss (raw and smoothed) or of the learning rate to its graphs.
    void handVisible(bool force = false);
    void handVisibleLr(bool force = false);
    void updateAntialiasing(int drawnPoints);
    void followLatest();
    void showCrosshair(QMouseEvent* event);

    QCustomPlot* m_plot;
    QCustomPlot* m_lrPlot;
    QCPGraph* m_raw;
    QCPGraph* m_smoothed;
    QCPGraph* m_valLoss;
    QCPGraph* m_valAccuracy;
    QCPGraph* m_lr;
    QCPItemStraightLine* m_cursor;
    ChartControls* m_controls;
    QTimer m_drainTimer;
    bool m_followLatest = true;

    std::vector<supervisor::StepMetric> m_pending;
    std::vector<supervisor::EvalMetric> m_pendingEval;
    LossChartSeries m_series;
    std::vector<supervisor::EvalMetric> m_evals;
    int m_version = 0;   // bumped when kept points change other than by appending (truncation, smoothing, axis)
    Handed m_handed, m_handedLr;
    XAxis m_xAxis = XAxis::Step;
    qint64 m_stepsPerEpoch = 0;
};

} // namespace ringmaster::ui
