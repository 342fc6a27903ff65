#include "ui/charts/loss_chart.h"

#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/charts/chart_controls.h"
#include "ui/charts/debiased_ema.h"
#include "qcustomplot.h"
#include "ui/charts/series_reduction.h"

namespace ringmaster::ui {
namespace {

constexpr int kDrainIntervalMs = 33;
// Antialiased polylines cost ~3 ms per 1,000 points in the raster engine (measured with
// tests/ui/bench_chart: replots went from 29 ms to well under 16 ms without it): past this many points
// handed to a graph, it is drawn without.
constexpr int kAntialiasedPointLimit = 1000;
// Pixel columns of the per-pixel reduction when the plot is narrower (not yet laid out).
constexpr int kMinColumns = 1024;
const QColor kRawColor(31, 119, 180, 60);
const QColor kSmoothColor(31, 119, 180);
const QColor kValLossColor(214, 39, 40);
const QColor kValAccColor(44, 160, 44);
const QColor kLrColor(148, 103, 189);

// A learning rate is never negative and often constant: show 0 .. peak with headroom.
void fitLearningRateAxis(QCPAxis* axis, double peak)
{
    axis->setRange(0, peak > 0 ? peak * 1.15 : 1.0);
}

void styleAxisRect(QCustomPlot* plot)
{
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    plot->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    plot->setNoAntialiasingOnDrag(true);
    plot->setPlottingHints(QCP::phCacheLabels | QCP::phFastPolylines);
}

} // namespace

LossChart::LossChart(QWidget* parent)
    : QWidget(parent)
    , m_plot(new QCustomPlot(this))
    , m_lrPlot(new QCustomPlot(this))
{
    styleAxisRect(m_plot);
    m_plot->legend->setVisible(true);
    m_plot->legend->setBrush(QColor(255, 255, 255, 200));
    m_plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    m_plot->xAxis->setLabel(tr("step"));
    m_plot->yAxis->setLabel(tr("loss"));
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(tr("validation accuracy"));
    m_plot->yAxis2->setRange(0, 1);

    m_raw = m_plot->addGraph();
    m_raw->setName(tr("loss (all-rank mean)"));
    m_raw->setPen(QPen(kRawColor, 1));
    m_smoothed = m_plot->addGraph();
    m_smoothed->setName(tr("loss, smoothed"));
    m_smoothed->setPen(QPen(kSmoothColor, 2));
    m_valLoss = m_plot->addGraph();
    m_valLoss->setName(tr("validation loss"));
    m_valLoss->setPen(QPen(kValLossColor, 2));
    m_valLoss->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
    m_valAccuracy = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    m_valAccuracy->setName(tr("validation accuracy"));
    m_valAccuracy->setPen(QPen(kValAccColor, 2, Qt::DashLine));
    m_valAccuracy->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssSquare, 7));

    m_cursor = new QCPItemStraightLine(m_plot);
    m_cursor->setPen(QPen(QColor(120, 120, 120), 1, Qt::DotLine));
    m_cursor->setVisible(false);

    styleAxisRect(m_lrPlot);
    m_lrPlot->setFixedHeight(130);
    m_lrPlot->yAxis->setLabel(tr("learning rate"));
    m_lr = m_lrPlot->addGraph();
    m_lr->setPen(QPen(kLrColor, 2));
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), m_lrPlot,
            [this](const QCPRange& range) {
                m_lrPlot->xAxis->setRange(range);
                m_lrPlot->replot(QCustomPlot::rpQueuedReplot);
            });
    // Zoom, pan and resize replot: hand the graphs what is visible then (nothing when unchanged).
    connect(m_plot, &QCustomPlot::beforeReplot, this, [this] { handVisible(); });
    connect(m_lrPlot, &QCustomPlot::beforeReplot, this, [this] { handVisibleLr(); });
    // A user who zooms or pans keeps their view; "Fit" returns to following the run.
    connect(m_plot, &QCustomPlot::mousePress, this, [this] { m_followLatest = false; });
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { m_followLatest = false; });
    connect(m_plot, &QCustomPlot::mouseMove, this, &LossChart::showCrosshair);

    m_controls = new ChartControls({{tr("x: step"), tr("x: epoch"), tr("x: wall time (s)")},
                                    tr("Exponential moving average weight of the smoothed loss (debiased, as in TensorBoard)"),
                                    tr("Logarithmic loss axis")},
                                   m_series.smoothing(), this);
    connect(m_controls, &ChartControls::axisChosen, this, [this](int index) { setXAxis(static_cast<XAxis>(index)); });
    connect(m_controls, &ChartControls::smoothingChosen, this, &LossChart::setSmoothing);
    connect(m_controls, &ChartControls::logScaleChosen, this, &LossChart::setLogScale);
    connect(m_controls, &ChartControls::fitRequested, this, &LossChart::fit);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_controls);
    layout->addWidget(m_plot, 1);
    layout->addWidget(m_lrPlot);

    m_drainTimer.setInterval(kDrainIntervalMs);
    connect(&m_drainTimer, &QTimer::timeout, this, &LossChart::flush);
    m_drainTimer.start();
}

void LossChart::clear()
{
    m_pending.clear();
    m_pendingEval.clear();
    m_series.clear();
    m_evals.clear();
    ++m_version;
    m_followLatest = true;
    for (auto* graph : {m_raw, m_smoothed, m_valLoss, m_valAccuracy, m_lr}) graph->data()->clear();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    m_lrPlot->replot(QCustomPlot::rpQueuedReplot);
}

void LossChart::append(const supervisor::StepMetric& metric)
{
    m_pending.push_back(metric);
    if (m_pending.size() >= kMaxPendingMetrics) flush();   // a replayed history or a burst: the buffer stays bounded
}

void LossChart::appendEval(const supervisor::EvalMetric& metric)
{
    m_pendingEval.push_back(metric);
}

double LossChart::evalKey(std::size_t index) const
{
    const auto& eval = m_evals[index];
    switch (m_xAxis) {
    case XAxis::Epoch: return m_stepsPerEpoch > 0 ? static_cast<double>(eval.step) / m_stepsPerEpoch : eval.epoch + 1.0;
    case XAxis::WallTime: {
        // The wall time of the step the evaluation followed.
        const std::size_t at = m_series.upperBound(eval.step - 1);
        if (at < m_series.size()) return m_series.wall(at);
        return m_series.size() == 0 ? 0.0 : m_series.wall(m_series.size() - 1);
    }
    case XAxis::Step: break;
    }
    return static_cast<double>(eval.step);
}

void LossChart::flush()
{
    if (m_pending.empty() && m_pendingEval.empty()) return;
    for (const auto& m : m_pending) m_series.append(m.step, m.epoch, m_stepsPerEpoch, m.wallTime, m.loss, m.lr);
    for (const auto& eval : m_pendingEval) {
        m_evals.push_back(eval);
        m_valLoss->addData(evalKey(m_evals.size() - 1), eval.valLoss);
        if (std::isfinite(eval.valAccuracy)) m_valAccuracy->addData(evalKey(m_evals.size() - 1), eval.valAccuracy);
    }
    const supervisor::StepMetric latest = m_pending.empty() ? supervisor::StepMetric{} : m_pending.back();
    const bool hadSteps = !m_pending.empty();
    m_pending.clear();
    m_pendingEval.clear();
    if (m_followLatest) followLatest();
    handVisible();   // now, so what the graphs hold is current without waiting for the replot
    handVisibleLr();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    m_lrPlot->replot(QCustomPlot::rpQueuedReplot);
    if (hadSteps) Q_EMIT drained(latest);
}

void LossChart::handVisible(bool force)
{
    const QCPRange range = m_plot->xAxis->range();
    const int columns = std::max(m_plot->width(), kMinColumns);
    const std::size_t size = m_series.size();
    if (!force && m_handed.version == m_version && m_handed.low == range.lower && m_handed.high == range.upper &&
        m_handed.columns == columns && m_handed.size == size) {
        return;
    }
    const auto axis = seriesAxis();
    const auto keyAt = [this, axis](std::size_t i) { return m_series.key(axis, i); };
    const ReducedSeries raw = reduceToColumns(m_series.losses(), size, keyAt, range.lower, range.upper, columns, false);
    const ReducedSeries smooth = reduceToColumns(m_series.smoothedLine(), size, keyAt, range.lower, range.upper, columns, true);
    m_raw->setData(raw.keys, raw.values, true);
    m_smoothed->setData(smooth.keys, smooth.values, true);
    m_handed = {range.lower, range.upper, columns, size, m_version};
    const bool antialiased = raw.keys.size() <= kAntialiasedPointLimit;
    m_raw->setAntialiased(antialiased);
    m_smoothed->setAntialiased(antialiased);
}

void LossChart::handVisibleLr(bool force)
{
    const QCPRange range = m_lrPlot->xAxis->range();
    const int columns = std::max(m_lrPlot->width(), kMinColumns);
    const std::size_t size = m_series.size();
    if (!force && m_handedLr.version == m_version && m_handedLr.low == range.lower && m_handedLr.high == range.upper &&
        m_handedLr.columns == columns && m_handedLr.size == size) {
        return;
    }
    const auto axis = seriesAxis();
    const auto keyAt = [this, axis](std::size_t i) { return m_series.key(axis, i); };
    const ReducedSeries lr = reduceToColumns(m_series.lrs(), size, keyAt, range.lower, range.upper, columns, false);
    m_lr->setData(lr.keys, lr.values, true);
    m_handedLr = {range.lower, range.upper, columns, size, m_version};
    m_lr->setAntialiased(lr.keys.size() <= kAntialiasedPointLimit);
}

void LossChart::followLatest()
{
    // From the series' ends and running extremes: a drain costs the same at a million points as at a
    // hundred (rescaling scanned every point: 7 ms per drain at 1M points, measured).
    const std::size_t size = m_series.size();
    if (size == 0 && m_evals.empty()) return;
    const auto axis = seriesAxis();
    double first = std::numeric_limits<double>::infinity(), last = -first;
    if (size > 0) {
        first = m_series.key(axis, 0);
        last = m_series.key(axis, size - 1);
    }
    double low = m_series.hasLoss() ? m_series.lossLow() : std::numeric_limits<double>::infinity();
    double high = m_series.hasLoss() ? m_series.lossHigh() : -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < m_evals.size(); ++i) {
        first = std::min(first, evalKey(i));
        last = std::max(last, evalKey(i));
        if (std::isfinite(m_evals[i].valLoss)) {
            low = std::min(low, m_evals[i].valLoss);
            high = std::max(high, m_evals[i].valLoss);
        }
    }
    m_plot->xAxis->setRange(first, last > first ? last : first + 1.0);
    if (high >= low) {
        if (m_plot->yAxis->scaleType() == QCPAxis::stLogarithmic) {
            if (low > 0) m_plot->yAxis->setRange(low * 0.9, high * 1.1);
        } else {
            const double pad = high > low ? (high - low) * 0.05 : std::max(std::abs(high) * 0.05, 1e-6);
            m_plot->yAxis->setRange(low - pad, high + pad);
        }
    }
    fitLearningRateAxis(m_lr->valueAxis(), m_series.lrPeak());
}

void LossChart::truncateAfter(qint64 step)
{
    flush(); // what is buffered arrived before the restart
    const bool dropped = m_series.truncateAfter(step);
    const auto kept = std::remove_if(m_evals.begin(), m_evals.end(), [step](const auto& e) { return e.step > step; });
    if (!dropped && kept == m_evals.end()) return;
    m_evals.erase(kept, m_evals.end());
    ++m_version;
    redrawEvals();
    fit();
}

void LossChart::redrawEvals()
{
    m_valLoss->data()->clear();
    m_valAccuracy->data()->clear();
    for (std::size_t i = 0; i < m_evals.size(); ++i) {
        m_valLoss->addData(evalKey(i), m_evals[i].valLoss);
        if (std::isfinite(m_evals[i].valAccuracy)) m_valAccuracy->addData(evalKey(i), m_evals[i].valAccuracy);
    }
}

void LossChart::setXAxis(XAxis axis)
{
    m_xAxis = axis;
    static const char* labels[] = {"step", "epoch", "wall time (s)"};
    m_plot->xAxis->setLabel(tr(labels[static_cast<int>(axis)]));
    m_controls->showAxis(static_cast<int>(axis));
    ++m_version;
    redrawEvals();
    fit();
}

void LossChart::setSmoothing(double weight)
{
    m_series.setSmoothing(weight);
    m_controls->showSmoothing(m_series.smoothing());
    ++m_version;
    handVisible(true);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LossChart::setLogScale(bool on)
{
    m_plot->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    m_plot->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    m_controls->showLogScale(on);
    fit();
}

void LossChart::fit()
{
    m_followLatest = true;
    followLatest();
    m_plot->yAxis2->setRange(0, 1);
    handVisible();
    handVisibleLr();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    m_lrPlot->replot(QCustomPlot::rpQueuedReplot);
}

void LossChart::showCrosshair(QMouseEvent* event)
{
    const std::size_t size = m_series.size();
    if (size == 0) return;
    const double key = m_plot->xAxis->pixelToCoord(event->pos().x());
    const auto axis = seriesAxis();
    const auto keyAt = [this, axis](std::size_t i) { return m_series.key(axis, i); };
    // The nearest point among the first at or after the key and its predecessor.
    std::size_t index = std::min(gallopTo(keyAt, 0, size, key), size - 1);
    if (index > 0 && std::abs(keyAt(index - 1) - key) <= std::abs(keyAt(index) - key)) --index;
    const double at = keyAt(index);
    m_cursor->point1->setCoords(at, 0);
    m_cursor->point2->setCoords(at, 1);
    m_cursor->setVisible(true);
    QString text = tr("step %1  (epoch %2, %3 s)\nloss %4").arg(m_series.step(index)).arg(m_series.epoch(index), 0, 'f', 2)
                       .arg(m_series.wall(index), 0, 'f', 1).arg(m_series.loss(index), 0, 'g', 6);
    if (std::isfinite(m_series.smoothed(index))) text += tr("\nsmoothed %1").arg(m_series.smoothed(index), 0, 'g', 6);
    text += tr("\nlr %1").arg(m_series.lr(index), 0, 'g', 4);
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int LossChart::lossPointCount() const
{
    return static_cast<int>(m_series.size());
}

int LossChart::smoothedPointCount() const
{
    return static_cast<int>(m_series.smoothedCount());
}

int LossChart::evalPointCount() const
{
    return m_valLoss->data()->size();
}

int LossChart::drawnPointCount() const
{
    return m_raw->data()->size();
}

QVector<double> LossChart::smoothedValues() const
{
    QVector<double> values;
    DebiasedEma ema(m_series.smoothing());
    for (std::size_t i = 0; i < m_series.size(); ++i) {
        if (std::isfinite(m_series.loss(i))) values.append(ema.add(m_series.loss(i)));
    }
    return values;
}

} // namespace ringmaster::ui
