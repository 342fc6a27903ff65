// The "All scalars" chart (offscreen): names listed as they arrive, the default tick, panels by prefix,
// unticking, drained point counts, the debiased EMA against hand-computed values, truncation on a
// restart, the bounds (min/max-pair decimation, the pending buffer, the series count), overlaid runs,
// the per-pixel reduction (a one-point spike among 1,000,000 drawn at every zoom), float32 round trips
// and the store's memory per point (<= 24 bytes).
// With RINGMASTER_SCREENSHOT_DIR set, it saves scalars.png: a script-like run's scalars.
#include <QListWidget>
#include <QTest>

#include <cmath>

#include "qcustomplot.h"
#include "ui/charts/scalar_chart.h"

using namespace ringmaster;
using namespace ringmaster::ui;

namespace {

constexpr int kDrainTimeoutMs = 5000;

supervisor::ScalarBatch batch(qint64 step, std::initializer_list<std::pair<const char*, double>> values)
{
    supervisor::ScalarBatch b;
    b.step = step;
    for (const auto& [name, value] : values) b.values.append({QString::fromLatin1(name), value});
    return b;
}

// QT_NO_CAST_FROM_ASCII: "loss"_q is QString("loss").
QString operator""_q(const char* text, std::size_t size)
{
    return QString::fromLatin1(text, static_cast<qsizetype>(size));
}

int legendEntries(QCustomPlot* plot)
{
    return plot == nullptr ? -1 : plot->legend->itemCount();
}

} // namespace

class TestScalarChart : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void namesListedAsTheyArriveLossTickedByDefault()
    {
        ScalarChart chart;
        chart.append(batch(1, {{"lr", 0.1}, {"loss", 2.0}, {"samples_per_sec", 900.0}}));
        chart.flush();
        QCOMPARE(chart.names(), (QStringList{"loss"_q, "lr"_q, "samples_per_sec"_q})); // sorted
        QVERIFY(chart.isTicked("loss"_q));
        QVERIFY(!chart.isTicked("lr"_q));
        QVERIFY(!chart.isTicked("samples_per_sec"_q));
        chart.append(batch(1, {{"val_loss", 1.5}, {"epoch", 0.0}}));
        chart.flush();
        QCOMPARE(chart.names(), (QStringList{"epoch"_q, "loss"_q, "lr"_q, "samples_per_sec"_q, "val_loss"_q}));
        QCOMPARE(chart.nameList()->count(), 5);
        QVERIFY(chart.isTicked("loss"_q));
        QVERIFY(!chart.isTicked("val_loss"_q));
        QCOMPARE(chart.panelTitles(), QStringList{"scalars"_q});
        QCOMPARE(chart.panelPlot("scalars"_q)->graphCount(), 2); // loss: raw and smoothed
        chart.clear();
        QVERIFY(chart.names().isEmpty());
        QVERIFY(chart.panelTitles().isEmpty());
    }

    void withoutLossTheFirstNameIsTicked()
    {
        ScalarChart chart;
        chart.append(batch(1, {{"train/loss", 2.0}, {"grad_norm", 5.0}}));
        chart.flush();
        QCOMPARE(chart.names(), (QStringList{"grad_norm"_q, "train/loss"_q}));
        QVERIFY(chart.isTicked("train/loss"_q)); // the first that arrived, not the first listed
        QVERIFY(!chart.isTicked("grad_norm"_q));
        QCOMPARE(chart.panelTitles(), QStringList{"train"_q});
        chart.append(batch(2, {{"val/acc", 0.5}}));
        chart.flush();
        QVERIFY(!chart.isTicked("val/acc"_q)); // only one name is ticked by default
        chart.append(batch(3, {{"loss", 1.0}}));
        chart.flush();
        QVERIFY(chart.isTicked("loss"_q)); // loss, whenever it comes
        QCOMPARE(chart.panelTitles(), (QStringList{"scalars"_q, "train"_q}));
    }

    void panelsGroupedByPrefixAndUntickingHides()
    {
        ScalarChart chart;
        for (qint64 step = 1; step <= 10; ++step) {
            chart.append(batch(step, {{"train/loss", 1.0 / step}, {"train/acc", step / 10.0}, {"val/acc", 0.5}, {"grad_norm", 3.0}}));
        }
        chart.flush();
        for (const QString& name : {"train/acc"_q, "val/acc"_q, "grad_norm"_q}) chart.setTicked(name, true);
        QCOMPARE(chart.panelTitles(), (QStringList{"scalars"_q, "train"_q, "val"_q}));
        QCOMPARE(chart.panelPlot("scalars"_q)->graphCount(), 2);
        QCOMPARE(chart.panelPlot("train"_q)->graphCount(), 4);
        QCOMPARE(chart.panelPlot("val"_q)->graphCount(), 2);
        QCOMPARE(legendEntries(chart.panelPlot("train"_q)), 2); // one entry per scalar (the smoothed line)
        QCOMPARE(chart.panelPlot("train"_q)->graph(1)->name(), QStringLiteral("train/acc"));
        auto* title = qobject_cast<QCPTextElement*>(chart.panelPlot("val"_q)->plotLayout()->element(0, 0));
        QVERIFY(title != nullptr);
        QCOMPARE(title->text(), QStringLiteral("val"));

        chart.setTicked("val/acc"_q, false);
        QCOMPARE(chart.panelTitles(), (QStringList{"scalars"_q, "train"_q}));
        QCOMPARE(chart.drawnPointCount("val/acc"_q), -1);
        QCOMPARE(chart.pointCount("val/acc"_q), 10); // still kept, only not drawn
        chart.setTicked("train/acc"_q, false);
        QCOMPARE(chart.panelPlot("train"_q)->graphCount(), 2);
        chart.setTicked("train/loss"_q, false);
        chart.setTicked("grad_norm"_q, false);
        QVERIFY(chart.panelTitles().isEmpty());
        chart.setTicked("val/acc"_q, true);
        QCOMPARE(chart.panelTitles(), QStringList{"val"_q});
        QCOMPARE(chart.drawnPointCount("val/acc"_q), 10);
    }

    void pointsAreBufferedThenDrained()
    {
        ScalarChart chart;
        chart.append(batch(1, {{"loss", 1.0}}));
        chart.flush();
        for (qint64 step = 2; step <= 50; ++step) chart.append(batch(step, {{"loss", 1.0}, {"lr", 0.1}}));
        QCOMPARE(chart.pointCount("loss"_q), 1); // buffered, not drawn one by one
        QCOMPARE(chart.drawnPointCount("loss"_q), 1);
        QTRY_COMPARE_WITH_TIMEOUT(chart.drawnPointCount("loss"_q), 50, kDrainTimeoutMs); // the timer drains
        QCOMPARE(chart.pointCount("lr"_q), 49);
        QCOMPARE(chart.drawnPointCount("lr"_q), -1); // not ticked
    }

    void smoothingIsTheDebiasedEma()
    {
        ScalarChart chart;
        const double values[] = {1, 3, 2, 5, 4};
        for (qint64 i = 0; i < 5; ++i) chart.append(batch(i + 1, {{"loss", values[i]}}));
        chart.flush();
        // Weight 0.6, by hand: s_n = m_n / (1 - 0.6^n), m_n = 0.6 m_{n-1} + 0.4 v_n, m_0 = 0.
        //   m: 0.4, 1.44, 1.664, 2.9984, 3.39904   1 - 0.6^n: 0.4, 0.64, 0.784, 0.8704, 0.92224
        const QVector<double> expected{1.0, 1.44 / 0.64, 1.664 / 0.784, 2.9984 / 0.8704, 3.39904 / 0.92224};
        QVector<double> smoothed = chart.smoothedValues("loss"_q);
        QCOMPARE(smoothed.size(), expected.size());
        for (int i = 0; i < expected.size(); ++i) QVERIFY2(std::abs(smoothed[i] - expected[i]) < 1e-12, qPrintable(QString::number(smoothed[i])));
        // Weight 0.9: m = 0.1, 0.39, 0.551, by hand; 1 - 0.9^n = 0.1, 0.19, 0.271.
        chart.setSmoothing(0.9);
        smoothed = chart.smoothedValues("loss"_q);
        QVERIFY(std::abs(smoothed[1] - 0.39 / 0.19) < 1e-12);
        QVERIFY(std::abs(smoothed[2] - 0.551 / 0.271) < 1e-12);
        chart.setSmoothing(0.0);
        smoothed = chart.smoothedValues("loss"_q);
        for (int i = 0; i < 5; ++i) QCOMPARE(smoothed[i], values[i]);
    }

    void truncateAfterDropsTheReplayedSteps()
    {
        ScalarChart chart;
        for (qint64 step = 1; step <= 37; ++step) chart.append(batch(step, {{"loss", 1.0}}));
        for (qint64 step : {10, 20, 30}) chart.append(batch(step, {{"val_loss", 0.8}}));
        chart.flush();
        chart.setTicked("val_loss"_q, true);
        chart.truncateAfter(20); // the restart resumed from the step-20 checkpoint
        QCOMPARE(chart.pointCount("loss"_q), 20);
        QCOMPARE(chart.drawnPointCount("loss"_q), 20);
        QCOMPARE(chart.smoothedValues("loss"_q).size(), 20);
        QCOMPARE(chart.pointCount("val_loss"_q), 2);
        QCOMPARE(chart.drawnPointCount("val_loss"_q), 2);
        for (qint64 step = 21; step <= 40; ++step) chart.append(batch(step, {{"loss", 0.5}}));
        chart.flush();
        QCOMPARE(chart.drawnPointCount("loss"_q), 40); // one point per step
    }

    void aStepGoingBackReplacesThatSeriesFromThere()
    {
        // A script restarted and resumed from its step-15 checkpoint: its steps 15.. arrive again.
        ScalarChart chart;
        for (qint64 step = 0; step < 25; ++step) chart.append(batch(step, {{"loss", 1.0}, {"acc", 0.5}}));
        chart.flush();
        for (qint64 step = 15; step < 30; ++step) chart.append(batch(step, {{"loss", 0.25}}));
        chart.flush();
        QCOMPARE(chart.pointCount("loss"_q), 30);         // one point per step, not 40
        QCOMPARE(chart.drawnPointCount("loss"_q), 30);
        QCOMPARE(chart.smoothedValues("loss"_q).size(), 30);
        QCOMPARE(chart.pointCount("acc"_q), 25);          // a series that did not go back keeps its points
        chart.append(batch(29, {{"loss", 0.125}}));       // the same step again is not going back
        chart.flush();
        QCOMPARE(chart.pointCount("loss"_q), 31);
    }

    void boundsDecimateByMinMaxPairsAndDrainEarly()
    {
        ScalarChart chart;
        chart.setMaxPointsPerSeries(16);
        // 0, 1, 2, ... with one spike (1000 at step 37) and one dip (-1000 at step 70).
        for (qint64 step = 0; step < 100; ++step) {
            const double value = step == 37 ? 1000.0 : step == 70 ? -1000.0 : static_cast<double>(step % 7);
            chart.append(batch(step, {{"loss", value}}));
        }
        chart.flush();
        const ScalarSeries* series = chart.store().find(ScalarSeriesStore::keyOf(QString(), "loss"_q));
        QVERIFY(series != nullptr);
        QVERIFY(series->level >= 1);
        QVERIFY(series->size() <= 16); // the bound
        QVERIFY(series->size() >= 4);
        bool spike = false, dip = false;
        for (std::size_t i = 0; i < series->size(); ++i) {
            if (i > 0) QVERIFY(series->step(i) > series->step(i - 1)); // still in step order
            spike = spike || (series->value(i) == 1000.0 && series->step(i) == 37);
            dip = dip || (series->value(i) == -1000.0 && series->step(i) == 70);
        }
        QVERIFY(spike); // the extremes survive every halving, with their own step
        QVERIFY(dip);
        QCOMPARE(series->high, 1000.0);
        QCOMPARE(series->low, -1000.0);
        QCOMPARE(chart.drawnPointCount("loss"_q), static_cast<int>(series->size()));
        QCOMPARE(chart.smoothedValues("loss"_q).size(), static_cast<int>(series->size()));
        // A rewind after decimation: nothing past the step is kept, and new points follow.
        chart.truncateAfter(50);
        for (std::size_t i = 0; i < series->size(); ++i) QVERIFY(series->step(i) <= 50);
        QVERIFY(series->high == 1000.0 && series->low >= 0.0);
        for (qint64 step = 51; step < 200; ++step) chart.append(batch(step, {{"loss", 1.0}}));
        chart.flush();
        QVERIFY(series->size() <= 16); // the bound
        QVERIFY(series->step(series->size() - 1) > 150);

        ScalarChart big;
        for (std::size_t i = 0; i < ScalarChart::kMaxPendingPoints; ++i) big.appendPoint(QString(), "loss"_q, static_cast<qint64>(i), 0.0, 1.0);
        QCOMPARE(big.pointCount("loss"_q), static_cast<int>(ScalarChart::kMaxPendingPoints)); // drained without the timer
        big.clear();
        for (std::size_t i = 0; i < ScalarSeriesStore::kMaxSeries + 44; ++i) big.appendPoint(QString(), QStringLiteral("s%1").arg(i), 1, 0.0, 1.0);
        big.flush();
        QCOMPARE(big.store().series().size(), ScalarSeriesStore::kMaxSeries);
        QCOMPARE(big.store().refusedValues(), qint64(44));
        QCOMPARE(big.names().size(), static_cast<int>(ScalarSeriesStore::kMaxSeries));
    }

    void aSpikeOfOnePointInAMillionIsDrawnAtEveryZoom()
    {
        ScalarChart chart;
        chart.resize(1000, 600);
        constexpr qint64 kPoints = 1000000, kSpikeStep = 654321;
        for (qint64 step = 0; step < kPoints; ++step) {
            const double noise = std::sin(step * 12.9898) * 43758.5453;
            chart.appendPoint(QString(), "loss"_q, step, 1.7e9 + step * 0.01, step == kSpikeStep ? 50.0 : noise - std::floor(noise));
        }
        chart.flush();
        chart.setSmoothing(0.0); // the smoothed line is then the raw one: its spike must be drawn too
        QCustomPlot* plot = chart.panelPlot("scalars"_q);
        QVERIFY(plot != nullptr);
        const auto drawnSpike = [plot](int graph) {
            const auto* data = plot->graph(graph)->data().data();
            for (auto it = data->constBegin(); it != data->constEnd(); ++it) {
                if (it->value == 50.0) return it->key;
            }
            return -1.0;
        };
        // Fitted (every point in view), then zoomed in around the spike down to a few steps, and at the edges.
        const QList<std::pair<double, double>> views{{0, kPoints}, {600000, 700000}, {650000, 660000}, {654000, 654700},
                                                     {654310, 654330}, {654321, 654321.5}, {0, 654321}, {654321, kPoints}};
        for (const auto& [low, high] : views) {
            plot->xAxis->setRange(low, high);
            plot->replot(QCustomPlot::rpImmediateRefresh); // the chart hands the visible range over before drawing
            QCOMPARE(drawnSpike(0), static_cast<double>(kSpikeStep));
            QCOMPARE(drawnSpike(1), static_cast<double>(kSpikeStep));
            QVERIFY2(chart.drawnPointCount("loss"_q) <= 2 * std::max(plot->width(), 1024) + 4, qPrintable(QString::number(chart.drawnPointCount("loss"_q))));
        }
        // A view without the spike does not draw it; by wall time it is there again.
        plot->xAxis->setRange(0, 600000);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QCOMPARE(drawnSpike(0), -1.0);
        chart.setXAxis(ScalarChart::XAxis::WallTime);
        QVERIFY(std::abs(drawnSpike(0) - kSpikeStep * 0.01) < 0.01);
        chart.setLogScale(true);
        plot->replot(QCustomPlot::rpImmediateRefresh);
        QVERIFY(drawnSpike(0) > 0);
    }

    void valuesRoundTripAsFloat32AndStepsExactly()
    {
        ScalarSeriesStore store;
        const QList<double> values{0.1f, 1e-30f, 3.0e38f, -2.5, 0.0, 1.17549435e-38f * 0.5f, 123456.78f, -7e-3f};
        // Evenly spaced steps (kept implicitly), then irregular ones, one jump past 2^32 and a repeat.
        const QList<qint64> steps{10, 20, 30, 31, 1000, qint64(1) << 40, (qint64(1) << 40) + 3, (qint64(1) << 40) + 3};
        for (int i = 0; i < values.size(); ++i) QVERIFY(store.add(QString(), "loss"_q, steps[i], 1.7e9 + i * 0.25, values[i]));
        const ScalarSeries* series = store.find(ScalarSeriesStore::keyOf(QString(), "loss"_q));
        QCOMPARE(series->size(), static_cast<std::size_t>(values.size()));
        for (int i = 0; i < values.size(); ++i) {
            QCOMPARE(series->value(i), values[i]); // bit for bit: each is a float32
            QCOMPARE(series->step(i), steps[i]);
            QCOMPARE(series->wall(i), 1.7e9 + i * 0.25);
        }
        QVERIFY(!series->steps.implicit());
        QCOMPARE(static_cast<float>(store.find(ScalarSeriesStore::keyOf(QString(), "loss"_q))->high), 3.0e38f);
        // A double is rounded to the nearest float32.
        store.add(QString(), "lr"_q, 1, 0.0, 0.1);
        QCOMPARE(store.find(ScalarSeriesStore::keyOf(QString(), "lr"_q))->value(0), static_cast<double>(0.1f));
    }

    void memoryPerPointIsAtMost24Bytes()
    {
        ScalarSeriesStore store;
        constexpr std::size_t kPoints = 1000000;
        for (std::size_t i = 0; i < kPoints; ++i) {
            const auto step = static_cast<qint64>(i);
            store.add(QString(), "loss"_q, step, 1.7e9 + i * 0.013, std::sin(i * 0.001));            // even steps: implicit
            store.add(QString(), "val/acc"_q, step * 3 + step % 2, 1.7e9 + i * 0.013, 1.0 / (1 + i)); // irregular steps
        }
        QCOMPARE(store.pointCount(), 2 * kPoints);
        const double even = static_cast<double>(store.find(ScalarSeriesStore::keyOf(QString(), "loss"_q))->memoryBytes()) / kPoints;
        const double irregular = static_cast<double>(store.find(ScalarSeriesStore::keyOf(QString(), "val/acc"_q))->memoryBytes()) / kPoints;
        qInfo("bytes per point: %.2f with evenly spaced steps, %.2f with irregular ones", even, irregular);
        QVERIFY2(even <= 24.0, qPrintable(QString::number(even)));
        QVERIFY2(irregular <= 24.0, qPrintable(QString::number(irregular)));
        QVERIFY(store.find(ScalarSeriesStore::keyOf(QString(), "loss"_q))->steps.implicit());
    }

    void runsOverlaidAndWallTimeAxis()
    {
        ScalarChart chart;
        chart.appendPoint("run-a"_q, "loss"_q, 1, 1000.0, 2.0);
        chart.appendPoint("run-a"_q, "loss"_q, 2, 1010.0, 1.0);
        chart.appendPoint("run-b"_q, "loss"_q, 1, 5000.0, 3.0);
        chart.appendPoint("run-b"_q, "loss"_q, 2, 5004.0, 2.5);
        chart.flush();
        QCOMPARE(chart.names(), QStringList{"loss"_q});
        QCOMPARE(chart.panelPlot("scalars"_q)->graphCount(), 4);
        QCOMPARE(chart.panelPlot("scalars"_q)->graph(1)->name(), QStringLiteral("run-a · loss"));
        chart.setXAxis(ScalarChart::XAxis::WallTime);
        // Each run's wall time from its own first point.
        QCOMPARE((chart.panelPlot("scalars"_q)->graph(0)->data()->constEnd() - 1)->key, 10.0);
        QCOMPARE((chart.panelPlot("scalars"_q)->graph(2)->data()->constEnd() - 1)->key, 4.0);
        chart.setLogScale(true);
        QCOMPARE(chart.panelPlot("scalars"_q)->yAxis->scaleType(), QCPAxis::stLogarithmic);
    }

    void screenshotOfAScriptsScalars()
    {
        const QString dir = qEnvironmentVariable("RINGMASTER_SCREENSHOT_DIR");
        if (dir.isEmpty()) QSKIP("RINGMASTER_SCREENSHOT_DIR not set");
        ScalarChart chart;
        chart.resize(1100, 760);
        chart.show();
        const double start = 1.7e9;
        for (qint64 step = 1; step <= 600; ++step) {
            const double noise = std::sin(step * 12.9898) * 43758.5453;
            const double jitter = (noise - std::floor(noise)) - 0.5;
            chart.appendPoint(QString(), "train/loss"_q, step, start + step * 0.2, 2.3 * std::exp(-step / 150.0) + 0.15 + 0.25 * jitter);
            chart.appendPoint(QString(), "train/acc"_q, step, start + step * 0.2, 0.95 - 0.85 * std::exp(-step / 120.0) + 0.08 * jitter);
            chart.appendPoint(QString(), "grad_norm"_q, step, start + step * 0.2, 4.0 * std::exp(-step / 300.0) + 0.6 + 0.8 * std::abs(jitter));
            if (step % 60 == 0) {
                chart.appendPoint(QString(), "val/loss"_q, step, start + step * 0.2, 2.2 * std::exp(-step / 160.0) + 0.22);
                chart.appendPoint(QString(), "val/acc"_q, step, start + step * 0.2, 0.93 - 0.8 * std::exp(-step / 130.0));
            }
        }
        chart.flush();
        for (const QString& name : {"train/acc"_q, "val/loss"_q, "val/acc"_q, "grad_norm"_q}) chart.setTicked(name, true);
        QTest::qWait(200);
        QVERIFY(chart.grab().save(dir + QStringLiteral("/scalars.png")));
    }
};

QTEST_MAIN(TestScalarChart)
#include "tst_scalar_chart.moc"
