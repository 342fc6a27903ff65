#pragma once
// The live training chart: loss per step (raw, faint) with an EMA-smoothed line (debiased, as
// TensorBoard does), validation loss and accuracy per evaluation (accuracy on the right axis), and
// the learning rate on its own small plot. x by step, epoch or wall time; log scale; zoom/pan; fit;
// a crosshair tooltip with the exact values.
// Metrics arrive through append(); they are buffered and drained by a coalescing timer (~33 ms) into
// one queued replot, so a fast run never stalls the UI. Every point is kept (a few MB per million):
// QCustomPlot's adaptive sampling handles the drawing.

#include <QTimer>
#include <QWidget>

#include <limits>
#include <vector>

#include "debiased_ema.h"
#include "run_types.h"

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

    int lossPointCount() const;
    int smoothedPointCount() const;
    int evalPointCount() const;
    QCustomPlot* plot() const { return m_plot; }

Q_SIGNALS:
    // Emitted after each drain with the newest step, for progress displays.
    void drained(const ringmaster::supervisor::StepMetric& latest);

private:
    double keyOf(std::size_t index) const;
    double evalKey(std::size_t index) const;
    void rebuild();
    void updateAntialiasing();
    void resetExtremes();
    void trackExtremes(double loss, double lr);
    void followLatest();
    void appendSmoothed(std::size_t from);
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
    // Every point of the run, by column.
    std::vector<double> m_steps, m_epochs, m_walls, m_losses, m_lrs;
    std::vector<supervisor::EvalMetric> m_evals;
    // Running extremes of the plotted values, so following the run never rescans the data.
    double m_lossLow = std::numeric_limits<double>::infinity();
    double m_lossHigh = -std::numeric_limits<double>::infinity();
    double m_lrPeak = 0.0;
    DebiasedEma m_ema;
    XAxis m_xAxis = XAxis::Step;
    qint64 m_stepsPerEpoch = 0;
};

} // namespace ringmaster::ui
