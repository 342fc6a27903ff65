#include "loss_chart.h"

#include <QToolTip>
#include <QVBoxLayout>

#include <cmath>
#include <limits>

#include "chart_controls.h"
#include "qcustomplot.h"

namespace ringmaster::ui {
namespace {

constexpr int kDrainIntervalMs = 33;
// Antialiased polylines cost ~3 ms per 1,000 points in the raster engine until adaptive sampling
// takes over (~10k points): past this many points the dense lines are drawn without it (measured
// with tests/ui/bench_chart: replots went from 29 ms to well under 16 ms).
constexpr int kAntialiasedPointLimit = 1000;
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
    m_raw->setAdaptiveSampling(true);
    m_smoothed = m_plot->addGraph();
    m_smoothed->setName(tr("loss, smoothed"));
    m_smoothed->setPen(QPen(kSmoothColor, 2));
    m_smoothed->setAdaptiveSampling(true);
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
    m_lr->setAdaptiveSampling(true);
    connect(m_plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), m_lrPlot,
            [this](const QCPRange& range) {
                m_lrPlot->xAxis->setRange(range);
                m_lrPlot->replot(QCustomPlot::rpQueuedReplot);
            });
    // A user who zooms or pans keeps their view; "Fit" returns to following the run.
    connect(m_plot, &QCustomPlot::mousePress, this, [this] { m_followLatest = false; });
    connect(m_plot, &QCustomPlot::mouseWheel, this, [this] { m_followLatest = false; });
    connect(m_plot, &QCustomPlot::mouseMove, this, &LossChart::showCrosshair);

    m_controls = new ChartControls({{tr("x: step"), tr("x: epoch"), tr("x: wall time (s)")},
                                    tr("Exponential moving average weight of the smoothed loss (debiased, as in TensorBoard)"),
                                    tr("Logarithmic loss axis")},
                                   m_ema.weight(), this);
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
    for (auto* column : {&m_steps, &m_epochs, &m_walls, &m_losses, &m_lrs}) column->clear();
    m_evals.clear();
    m_ema.reset();
    m_followLatest = true;
    resetExtremes();
    for (auto* graph : {m_raw, m_smoothed, m_valLoss, m_valAccuracy, m_lr}) graph->data()->clear();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    m_lrPlot->replot(QCustomPlot::rpQueuedReplot);
}

void LossChart::append(const supervisor::StepMetric& metric)
{
    m_pending.push_back(metric);
}

void LossChart::appendEval(const supervisor::EvalMetric& metric)
{
    m_pendingEval.push_back(metric);
}

double LossChart::keyOf(std::size_t index) const
{
    switch (m_xAxis) {
    case XAxis::Epoch: return m_epochs[index];
    case XAxis::WallTime: return m_walls[index];
    case XAxis::Step: break;
    }
    return m_steps[index];
}

double LossChart::evalKey(std::size_t index) const
{
    const auto& eval = m_evals[index];
    switch (m_xAxis) {
    case XAxis::Epoch: return m_stepsPerEpoch > 0 ? static_cast<double>(eval.step) / m_stepsPerEpoch : eval.epoch + 1.0;
    case XAxis::WallTime: {
        // The wall time of the step the evaluation followed.
        const auto it = std::lower_bound(m_steps.begin(), m_steps.end(), static_cast<double>(eval.step));
        return it == m_steps.end() ? (m_walls.empty() ? 0.0 : m_walls.back()) : m_walls[static_cast<std::size_t>(it - m_steps.begin())];
    }
    case XAxis::Step: break;
    }
    return static_cast<double>(eval.step);
}

void LossChart::appendSmoothed(std::size_t from)
{
    QVector<double> keys, values;
    keys.reserve(static_cast<qsizetype>(m_losses.size() - from));
    values.reserve(keys.capacity());
    for (std::size_t i = from; i < m_losses.size(); ++i) {
        if (!std::isfinite(m_losses[i])) continue;
        keys.append(keyOf(i));
        values.append(m_ema.add(m_losses[i]));
    }
    m_smoothed->addData(keys, values, true);
}

void LossChart::flush()
{
    if (m_pending.empty() && m_pendingEval.empty()) return;
    const std::size_t first = m_losses.size();
    QVector<double> keys, losses, lrs;
    keys.reserve(static_cast<qsizetype>(m_pending.size()));
    losses.reserve(keys.capacity());
    lrs.reserve(keys.capacity());
    for (const auto& m : m_pending) {
        trackExtremes(m.loss, m.lr);
        m_steps.push_back(static_cast<double>(m.step));
        m_epochs.push_back(m_stepsPerEpoch > 0 ? static_cast<double>(m.step) / m_stepsPerEpoch : static_cast<double>(m.epoch));
        m_walls.push_back(m.wallTime);
        m_losses.push_back(m.loss);
        m_lrs.push_back(m.lr);
        keys.append(keyOf(m_losses.size() - 1));
        losses.append(m.loss);
        lrs.append(m.lr);
    }
    m_raw->addData(keys, losses, true);
    m_lr->addData(keys, lrs, true);
    appendSmoothed(first);
    updateAntialiasing();
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
    m_plot->replot(QCustomPlot::rpQueuedReplot);
    m_lrPlot->replot(QCustomPlot::rpQueuedReplot);
    if (hadSteps) Q_EMIT drained(latest);
}

void LossChart::resetExtremes()
{
    m_lossLow = std::numeric_limits<double>::infinity();
    m_lossHigh = -std::numeric_limits<double>::infinity();
    m_lrPeak = 0.0;
}

void LossChart::trackExtremes(double loss, double lr)
{
    if (std::isfinite(loss)) {
        m_lossLow = std::min(m_lossLow, loss);
        m_lossHigh = std::max(m_lossHigh, loss);
    }
    if (std::isfinite(lr)) m_lrPeak = std::max(m_lrPeak, lr);
}

void LossChart::followLatest()
{
    // Ranges kept as points arrive: a drain costs the same at a million points as at a hundred
    // (rescaling scanned every point: 7 ms per drain at 1M points, measured).
    if (m_steps.empty()) return;
    const double first = keyOf(0);
    const double last = keyOf(m_steps.size() - 1);
    m_plot->xAxis->setRange(first, last > first ? last : first + 1.0);
    if (m_lossHigh >= m_lossLow) {
        if (m_plot->yAxis->scaleType() == QCPAxis::stLogarithmic) {
            if (m_lossLow > 0) m_plot->yAxis->setRange(m_lossLow * 0.9, m_lossHigh * 1.1);
        } else {
            const double pad = m_lossHigh > m_lossLow ? (m_lossHigh - m_lossLow) * 0.05 : std::max(std::abs(m_lossHigh) * 0.05, 1e-6);
            m_plot->yAxis->setRange(m_lossLow - pad, m_lossHigh + pad);
        }
    }
    fitLearningRateAxis(m_lr->valueAxis(), m_lrPeak);
}

void LossChart::truncateAfter(qint64 step)
{
    flush(); // what is buffered arrived before the restart
    const auto keep = static_cast<std::size_t>(std::upper_bound(m_steps.begin(), m_steps.end(), static_cast<double>(step)) - m_steps.begin());
    if (keep == m_steps.size() && std::none_of(m_evals.begin(), m_evals.end(), [step](const auto& e) { return e.step > step; })) return;
    for (auto* column : {&m_steps, &m_epochs, &m_walls, &m_losses, &m_lrs}) column->resize(keep);
    m_evals.erase(std::remove_if(m_evals.begin(), m_evals.end(), [step](const auto& e) { return e.step > step; }), m_evals.end());
    rebuild();
}

void LossChart::updateAntialiasing()
{
    const bool smooth = m_losses.size() <= static_cast<std::size_t>(kAntialiasedPointLimit);
    for (auto* graph : {m_raw, m_smoothed, m_lr}) graph->setAntialiased(smooth);
}

void LossChart::rebuild()
{
    for (auto* graph : {m_raw, m_smoothed, m_valLoss, m_valAccuracy, m_lr}) graph->data()->clear();
    QVector<double> keys, losses, lrs;
    resetExtremes();
    for (std::size_t i = 0; i < m_losses.size(); ++i) {
        trackExtremes(m_losses[i], m_lrs[i]);
        keys.append(keyOf(i));
        losses.append(m_losses[i]);
        lrs.append(m_lrs[i]);
    }
    m_raw->setData(keys, losses, true);
    m_lr->setData(keys, lrs, true);
    updateAntialiasing();
    m_ema.reset();
    appendSmoothed(0);
    for (std::size_t i = 0; i < m_evals.size(); ++i) {
        m_valLoss->addData(evalKey(i), m_evals[i].valLoss);
        if (std::isfinite(m_evals[i].valAccuracy)) m_valAccuracy->addData(evalKey(i), m_evals[i].valAccuracy);
    }
    fit();
}

void LossChart::setXAxis(XAxis axis)
{
    m_xAxis = axis;
    static const char* labels[] = {"step", "epoch", "wall time (s)"};
    m_plot->xAxis->setLabel(tr(labels[static_cast<int>(axis)]));
    m_controls->showAxis(static_cast<int>(axis));
    rebuild();
}

void LossChart::setSmoothing(double weight)
{
    m_ema.setWeight(weight);
    m_controls->showSmoothing(m_ema.weight());
    m_smoothed->data()->clear();
    appendSmoothed(0);
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
    m_plot->xAxis->rescale();
    m_raw->rescaleValueAxis(false, true);
    m_valLoss->rescaleValueAxis(true, true);
    m_plot->yAxis2->setRange(0, 1);
    fitLearningRateAxis(m_lr->valueAxis(), m_lrPeak);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void LossChart::showCrosshair(QMouseEvent* event)
{
    if (m_losses.empty()) return;
    const double key = m_plot->xAxis->pixelToCoord(event->pos().x());
    const auto it = m_raw->data()->findBegin(key, true);
    if (it == m_raw->data()->constEnd()) return;
    // The nearest point among the one found and its successor.
    auto nearest = it;
    if (std::next(it) != m_raw->data()->constEnd() && std::abs(std::next(it)->key - key) < std::abs(it->key - key)) {
        nearest = std::next(it);
    }
    const auto index = static_cast<std::size_t>(nearest - m_raw->data()->constBegin());
    if (index >= m_losses.size()) return;
    m_cursor->point1->setCoords(nearest->key, 0);
    m_cursor->point2->setCoords(nearest->key, 1);
    m_cursor->setVisible(true);
    const auto smooth = m_smoothed->data()->findBegin(nearest->key, true);
    QString text = tr("step %1  (epoch %2, %3 s)\nloss %4").arg(m_steps[index]).arg(m_epochs[index], 0, 'f', 2)
                       .arg(m_walls[index], 0, 'f', 1).arg(m_losses[index], 0, 'g', 6);
    if (smooth != m_smoothed->data()->constEnd()) text += tr("\nsmoothed %1").arg(smooth->value, 0, 'g', 6);
    text += tr("\nlr %1").arg(m_lrs[index], 0, 'g', 4);
    QToolTip::showText(event->globalPosition().toPoint(), text, m_plot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

int LossChart::lossPointCount() const
{
    return m_raw->data()->size();
}

int LossChart::smoothedPointCount() const
{
    return m_smoothed->data()->size();
}

int LossChart::evalPointCount() const
{
    return m_valLoss->data()->size();
}

} // namespace ringmaster::ui
