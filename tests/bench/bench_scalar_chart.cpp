// "All scalars" chart benchmark (prints figures; asserts nothing; not a ctest test):
//  - memory per kept point: the process's RSS growth while one series takes 10,000,000 points,
//  - replot time (a zoom, then the replot, as a user's wheel does) of one run of 10,000,000 points,
//  - the same for 100 runs of 100,000 points overlaid,
//  - the event loop's longest stall while a producer appends 10,000 records/s (loss and lr each) for
//    3 s on top of a 1,000,000-step history, drained by the chart's own coalescing timer.
// Run: QT_QPA_PLATFORM=offscreen build/tests/bench_scalar_chart
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "qcustomplot.h"
#include "ui/charts/scalar_chart.h"

using ringmaster::ui::ScalarChart;

namespace {

long rssKiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return -1;
    for (const auto& line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong();
    }
    return -1;
}

// A decaying loss with noise and a rare spike (one step in 250,000 jumps to 50).
double lossAt(qint64 step)
{
    const double noise = std::sin(step * 12.9898) * 43758.5453;
    const double spike = step % 250000 == 123456 ? 50.0 : 0.0;
    return 2.3 * std::exp(-step / 2e6) + 0.1 * (noise - std::floor(noise)) + spike;
}

// Mean and worst of `times` replots, each after moving the x range (the chart reduces on a range change).
void timeReplots(ScalarChart* chart, const char* what, double lastKey)
{
    QCustomPlot* plot = chart->panelPlot(QStringLiteral("scalars"));
    if (plot == nullptr) {
        std::printf("%s: no panel\n", what);
        return;
    }
    plot->replot(QCustomPlot::rpImmediateRefresh); // warm up (layout, label cache)
    double worst = 0, total = 0;
    const int times = 10;
    for (int i = 0; i < times; ++i) {
        plot->xAxis->setRange(0, lastKey * (0.55 + 0.05 * i));
        QElapsedTimer timer;
        timer.start();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const double ms = timer.nsecsElapsed() / 1e6;
        worst = std::max(worst, ms);
        total += ms;
    }
    std::printf("%s: replot after a zoom: mean %.1f ms, worst %.1f ms (target <= 30 ms)\n", what, total / times, worst);
    QElapsedTimer again;
    again.start();
    for (int i = 0; i < times; ++i) plot->replot(QCustomPlot::rpImmediateRefresh);
    std::printf("%s: replot of an unchanged view (drawing only): mean %.1f ms\n", what, again.nsecsElapsed() / 1e6 / times);
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    constexpr qint64 kLong = 10000000;
    {
        ScalarChart chart;
        chart.resize(1400, 700);
        chart.show();
        QCoreApplication::processEvents();
        const long before = rssKiB();
        QElapsedTimer fill;
        fill.start();
        for (qint64 step = 0; step < kLong; ++step) chart.appendPoint(QString(), QStringLiteral("loss"), step, 1.7e9 + step * 0.001, lossAt(step));
        chart.flush();
        const double fillS = fill.nsecsElapsed() / 1e9;
        const long after = rssKiB();
        const int kept = chart.pointCount(QStringLiteral("loss"));
        std::printf("1 run x %lld points: %d kept, RSS +%.1f MiB = %.1f bytes per kept point (target <= 24), filled in %.1f s\n",
                    static_cast<long long>(kLong), kept, (after - before) / 1024.0, (after - before) * 1024.0 / std::max(kept, 1), fillS);
#ifdef RINGMASTER_BENCH_STORE_BYTES
        std::printf("store: %.2f bytes per kept point (ScalarSeriesStore::memoryBytes(), the columns and the min/max pyramid)\n",
                    static_cast<double>(chart.store().memoryBytes()) / std::max<std::size_t>(chart.store().pointCount(), 1));
#endif
        chart.fit();
        timeReplots(&chart, "1 run x 10,000,000", static_cast<double>(kLong));
    }
    {
        ScalarChart chart;
        chart.resize(1400, 700);
        chart.show();
        for (int run = 0; run < 100; ++run) {
            const QString label = QStringLiteral("run %1").arg(run);
            for (qint64 step = 0; step < 100000; ++step) chart.appendPoint(label, QStringLiteral("loss"), step, 1.7e9 + step, lossAt(step * 100 + run) * (1 + run * 0.01));
        }
        chart.flush();
        chart.fit();
        timeReplots(&chart, "100 runs x 100,000", 100000.0);
    }
    {
        ScalarChart chart;
        chart.resize(1400, 700);
        chart.show();
        qint64 step = 0;
        for (; step < 1000000; ++step) chart.appendPoint(QString(), QStringLiteral("loss"), step, 1.7e9 + step * 0.0001, lossAt(step));
        chart.flush();
        chart.fit();
        QCoreApplication::processEvents();
        QElapsedTimer clock;
        clock.start();
        qint64 produced = 0;
        QTimer producer; // as the supervisor's socket reads: records appended on the GUI thread as they come
        producer.setInterval(1);
        producer.setTimerType(Qt::PreciseTimer);
        QObject::connect(&producer, &QTimer::timeout, &chart, [&] {
            const qint64 due = clock.elapsed() * 10; // 10,000 records/s
            for (; produced < due; ++produced, ++step) {
                ringmaster::supervisor::ScalarBatch batch;
                batch.step = step;
                batch.values.append({QStringLiteral("loss"), lossAt(step)});
                batch.values.append({QStringLiteral("lr"), 0.01});
                chart.append(batch);
            }
        });
        qint64 longestStallUs = 0;
        QElapsedTimer loopClock;
        QTimer probe; // fires every 1 ms; a late firing is a stall of the event loop
        probe.setInterval(1);
        probe.setTimerType(Qt::PreciseTimer);
        QObject::connect(&probe, &QTimer::timeout, &chart, [&] {
            longestStallUs = std::max(longestStallUs, loopClock.nsecsElapsed() / 1000);
            loopClock.restart();
        });
        int replots = 0;
        QObject::connect(chart.panelPlot(QStringLiteral("scalars")), &QCustomPlot::afterReplot, &chart, [&] { ++replots; });
        loopClock.start();
        producer.start();
        probe.start();
        while (clock.elapsed() < 3000) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
        probe.stop();
        producer.stop();
        std::printf("live: %lld records in 3 s (%.0f/s) on a 1,000,000-step history, %d replots, longest event-loop stall %.1f ms (target <= 16 ms)\n",
                    static_cast<long long>(produced), produced / 3.0, replots, longestStallUs / 1000.0);
    }
    return 0;
}
