// The Training tab's chart (LossChart, offscreen) on its compact store: every step kept (counts), the
// per-pixel reduction (a one-step spike among 1,000,000 drawn at every zoom, by step, epoch and wall time,
// raw and smoothed), the store's memory per point (<= 24 bytes, evenly spaced steps or not), float32
// values, the debiased EMA against hand-computed values and after a change of weight, a restart's
// truncation (later steps and evaluations dropped, the smoothed line recomputed), evaluations on each
// x axis, and the bounded pending buffer.
#include <QTest>

#include <cmath>

#include "ui/charts/loss_chart.h"
#include "qcustomplot.h"

using namespace ringmaster;
using namespace ringmaster::ui;

namespace {

supervisor::StepMetric metric(qint64 step, double loss, qint64 epoch = 0, double lr = 0.01, double wall = -1)
{
    supervisor::StepMetric m;
    m.step = step;
    m.epoch = epoch;
    m.loss = loss;
    m.lr = lr;
    m.samplesPerSec = 8000;
    m.wallTime = wall >= 0 ? wall : step * 0.01;
    return m;
}

supervisor::EvalMetric evaluation(qint64 step, qint64 epoch, double valLoss, double valAccuracy)
{
    supervisor::EvalMetric e;
    e.step = step;
    e.epoch = epoch;
    e.valLoss = valLoss;
    e.valAccuracy = valAccuracy;
    return e;
}

// The key at which GRAPH draws VALUE, or -1 when it does not.
double drawnAt(QCPGraph* graph, double value)
{
    const auto* data = graph->data().data();
    for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
        if (it->value == value) return it->key;
    }
    return -1.0;
}

} // namespace

class TestLossChart : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aSpikeOfOnePointInAMillionIsDrawnAtEveryZoom()
    {
        LossChart chart;
        chart.resize(1000, 600);
        constexpr qint64 kPoints = 1000000, kSpikeStep = 654321, kStepsPerEpoch = 10000;
        chart.setStepsPerEpoch(kStepsPerEpoch);
        for (qint64 step = 1; step <= kPoints; ++step) {
            const double noise = std::sin(step * 12.9898) * 43758.5453;
            chart.append(metric(step, step == kSpikeStep ? 50.0 : noise - std::floor(noise), step / kStepsPerEpoch,
                                step == kSpikeStep ? 7.0 : 0.01));
        }
        chart.flush();
        QCOMPARE(chart.lossPointCount(), static_cast<int>(kPoints));
        chart.setSmoothing(0.0); // the smoothed line is then the raw one: its spike must be drawn too
        QCustomPlot* plot = chart.plot();
        QCPGraph* raw = plot->graph(0);
        QCPGraph* smoothed = plot->graph(1);
        const int bound = 2 * std::max(plot->width(), 1024) + 4;
        // Fitted (every point in view), then zoomed in around the spike down to a few steps, and at the edges.
        const QList<std::pair<double, double>> views{{1, kPoints}, {600000, 700000}, {650000, 660000}, {654000, 654700},
                                                     {654310, 654330}, {654321, 654321.5}, {1, 654321}, {654321, kPoints}};
        for (const auto& [low, high] : views) {
            plot->xAxis->setRange(low, high);
            plot->replot(QCustomPlot::rpImmediateRefresh); // the chart hands the visible range over before drawing
            QCOMPARE(drawnAt(raw, 50.0), static_cast<double>(kSpikeStep));
            QCOMPARE(drawnAt(smoothed, 50.0), static_cast<double>(kSpikeStep));
            QVERIFY2(chart.drawnPointCount() <= bound, qPrintable(QString::number(chart.drawnPointCount())));
        }
        // The learning-rate plot follows the x range and draws its own spike.
        QCustomPlot* lrPlot = chart.findChildren<QCustomPlot*>().at(1);
        QVERIFY(lrPlot != plot);
        plot->xAxis->setRange(1, kPoints);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        lrPlot->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(drawnAt(lrPlot->graph(0), 7.0), static_cast<double>(kSpikeStep));
        QVERIFY(lrPlot->graph(0)->data()->size() <= bound);

        // A view without the spike does not draw it; by epoch and by wall time it is there again.
        plot->xAxis->setRange(1, 600000);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(drawnAt(raw, 50.0), -1.0);
        chart.setXAxis(LossChart::XAxis::Epoch);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(drawnAt(raw, 50.0), static_cast<double>(kSpikeStep) / kStepsPerEpoch);
        chart.setXAxis(LossChart::XAxis::WallTime);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(std::abs(drawnAt(raw, 50.0) - kSpikeStep * 0.01) < 0.01);
        chart.setLogScale(true);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(drawnAt(raw, 50.0) > 0);
        QCOMPARE(chart.lossPointCount(), static_cast<int>(kPoints)); // nothing is decimated
    }

    void memoryPerPointIsAtMost24Bytes()
    {
        constexpr qint64 kPoints = 1000000;
        LossChart even, irregular;
        for (qint64 i = 1; i <= kPoints; ++i) {
            even.append(metric(i, std::sin(i * 0.001) + 2, i / 5000, 0.01 * (1 + std::cos(i * 1e-5)), 1.7e9 + i * 0.013));
            irregular.append(metric(i * 3 + i % 2, 1.0 / (1 + i), i / 5000, 0.01, 1.7e9 + i * 0.013));
        }
        even.flush();
        irregular.flush();
        QCOMPARE(even.lossPointCount(), static_cast<int>(kPoints));
        QCOMPARE(irregular.lossPointCount(), static_cast<int>(kPoints));
        const double evenBytes = static_cast<double>(even.series().memoryBytes()) / kPoints;
        const double irregularBytes = static_cast<double>(irregular.series().memoryBytes()) / kPoints;
        qInfo("Training chart, bytes per point: %.2f with evenly spaced steps, %.2f with irregular ones", evenBytes, irregularBytes);
        QVERIFY2(evenBytes <= 24.0, qPrintable(QString::number(evenBytes)));
        QVERIFY2(irregularBytes <= 24.0, qPrintable(QString::number(irregularBytes)));
        // Steps and epochs exact, values as float32, wall times to a millisecond.
        const LossChartSeries& s = irregular.series();
        for (const std::size_t i : {std::size_t(0), std::size_t(4998), std::size_t(777777), std::size_t(kPoints - 1)}) {
            const auto n = static_cast<qint64>(i) + 1;
            QCOMPARE(s.step(i), n * 3 + n % 2);
            QCOMPARE(s.epoch(i), static_cast<double>(n / 5000));
            QCOMPARE(s.loss(i), static_cast<double>(static_cast<float>(1.0 / (1 + n))));
            QVERIFY(std::abs(s.wall(i) - (1.7e9 + n * 0.013)) < 1e-3);
        }
    }

    void smoothingIsTheDebiasedEmaOfTheStoredLosses()
    {
        LossChart chart;
        chart.setSmoothing(0.5);
        const QList<double> losses{4.0, 2.0, std::nan(""), 1.0};
        for (int i = 0; i < losses.size(); ++i) chart.append(metric(i + 1, losses[i]));
        chart.flush();
        QCOMPARE(chart.lossPointCount(), 4);
        QCOMPARE(chart.smoothedPointCount(), 3); // the NaN is skipped
        // By hand: the running average m = 0.5 m + 0.5 x over the finite values is 2, 2, 1.5, divided by
        // 1 - 0.5^n (n = 1, 2, 3) to remove the bias of its start at 0.
        const QVector<double> expected{2.0 / 0.5, 2.0 / 0.75, 1.5 / 0.875};
        QCOMPARE(chart.smoothedValues(), expected);
        for (int i : {0, 1, 3}) {
            const double drawn = chart.series().smoothed(static_cast<std::size_t>(i));
            QCOMPARE(drawn, static_cast<double>(static_cast<float>(expected[i == 3 ? 2 : i])));
        }
        QVERIFY(std::isnan(chart.series().smoothed(2)));
        chart.setSmoothing(0.0);
        QCOMPARE(chart.series().smoothed(3), 1.0);
        QCOMPARE(chart.smoothedValues(), (QVector<double>{4.0, 2.0, 1.0}));
    }

    void aRestartDropsLaterStepsAndEvaluations()
    {
        LossChart chart;
        chart.setStepsPerEpoch(10);
        for (qint64 step = 1; step <= 30; ++step) chart.append(metric(step, 100.0 - step, (step - 1) / 10));
        for (qint64 epoch = 0; epoch < 3; ++epoch) chart.appendEval(evaluation((epoch + 1) * 10, epoch, 0.5 - epoch * 0.1, 0.8));
        chart.flush();
        QCOMPARE(chart.evalPointCount(), 3);
        QCOMPARE(chart.series().lossLow(), 70.0);
        chart.truncateAfter(20); // resumed from the checkpoint of step 20
        QCOMPARE(chart.lossPointCount(), 20);
        QCOMPARE(chart.evalPointCount(), 2);
        QCOMPARE(chart.series().lossLow(), 80.0);  // the extremes follow
        QCOMPARE(chart.smoothedPointCount(), 20);
        // The replayed attempt continues from step 21, its smoothing from the kept points.
        for (qint64 step = 21; step <= 25; ++step) chart.append(metric(step, 1.0, 2));
        chart.flush();
        QCOMPARE(chart.lossPointCount(), 25);
        QCOMPARE(chart.series().step(24), qint64(25));
        QCOMPARE(chart.series().loss(24), 1.0);
        const QVector<double> smoothed = chart.smoothedValues();
        QCOMPARE(chart.series().smoothed(24), static_cast<double>(static_cast<float>(smoothed.last())));
        // Nothing after the step: nothing changes.
        chart.truncateAfter(99);
        QCOMPARE(chart.lossPointCount(), 25);
        // Evaluations on each axis: by step, by epoch (step / steps per epoch) and at the wall time of their step.
        QCOMPARE(chart.plot()->graph(2)->data()->at(1)->key, 20.0);
        chart.setXAxis(LossChart::XAxis::Epoch);
        QCOMPARE(chart.plot()->graph(2)->data()->at(1)->key, 2.0);
        chart.setXAxis(LossChart::XAxis::WallTime);
        QCOMPARE(chart.plot()->graph(2)->data()->at(1)->key, chart.series().wall(19));
        QCOMPARE(chart.lossPointCount(), 25);
        chart.clear();
        QCOMPARE(chart.lossPointCount(), 0);
        QCOMPARE(chart.evalPointCount(), 0);
    }

    void thePendingBufferIsBounded()
    {
        LossChart chart;
        int drains = 0;
        connect(&chart, &LossChart::drained, &chart, [&drains] { ++drains; });
        const qint64 points = 2 * static_cast<qint64>(LossChart::kMaxPendingMetrics) + 7;
        for (qint64 step = 1; step <= points; ++step) chart.append(metric(step, 1.0));
        // Drained twice on the way, without the event loop; the rest waits for the timer or flush().
        QCOMPARE(drains, 2);
        QCOMPARE(chart.lossPointCount(), static_cast<int>(2 * LossChart::kMaxPendingMetrics));
        chart.flush();
        QCOMPARE(chart.lossPointCount(), static_cast<int>(points));
    }
};

QTEST_MAIN(TestLossChart)
#include "tst_loss_chart.moc"
