// Training chart (LossChart) benchmark (prints figures; asserts nothing):
//  - the event loop's longest stall while 10,000 metric records/s arrive over a real socket for 5 s,
//  - with 1,000,000 points: replot time of the whole run, replot after a zoom (the chart reduces the
//    visible range per pixel column), whether a one-step spike is drawn, the store's bytes per point
//    (LossChartSeries::memoryBytes) and the process's memory,
//  - the same replots and memory with 10,000,000 points.
// Run: QT_QPA_PLATFORM=offscreen build/tests/ui/bench_chart
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include <unistd.h>

#include "ui/charts/loss_chart.h"
#include "supervisor/metric_server.h"
#include "raw_socket.h"
#include "qcustomplot.h"

namespace {

long rssMiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly)) return -1;
    for (const auto& line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').first().toLong() / 1024;
    }
    return -1;
}

ringmaster::supervisor::StepMetric metric(qint64 step)
{
    ringmaster::supervisor::StepMetric m;
    m.step = step;
    m.epoch = step / 1000;
    m.loss = 2.3 * std::exp(-step / 2e5) + 0.05 * std::sin(step * 0.37);
    m.lr = 0.01;
    m.samplesPerSec = 8000;
    m.wallTime = step * 0.01;
    return m;
}

// Replot times of the whole run and after zooms, the spike, and memory: one line each.
void report(ringmaster::ui::LossChart& chart, const char* points, long rssBefore)
{
    QCustomPlot* plot = chart.plot();
    const QCPRange all = plot->xAxis->range();
    plot->replot(QCustomPlot::rpImmediateRefresh); // warm up (layout, label cache)
    double worst = 0, total = 0;
    const int replots = 10;
    for (int i = 0; i < replots; ++i) {
        QElapsedTimer timer;
        timer.start();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const double ms = timer.nsecsElapsed() / 1e6;
        worst = std::max(worst, ms);
        total += ms;
    }
    std::printf("%s points, replot of the whole run (loss, smoothed, evaluations): mean %.1f ms, worst %.1f ms (target <= 30 ms)\n",
                points, total / replots, worst);
    worst = total = 0;
    bool spikeEverywhere = true;
    for (int i = 0; i < replots; ++i) {
        // Zoomed in step by step around the spike, as a user's wheel does; the chart reduces the new range.
        const double half = (all.upper - all.lower) / std::pow(2.0, i + 1);
        plot->xAxis->setRange(654321 - half, 654321 + half);
        QElapsedTimer timer;
        timer.start();
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const double ms = timer.nsecsElapsed() / 1e6;
        worst = std::max(worst, ms);
        total += ms;
        bool drawn = false;
        for (auto it = plot->graph(0)->data()->constBegin(); it != plot->graph(0)->data()->constEnd(); ++it) drawn = drawn || it->value == 50.0;
        spikeEverywhere = spikeEverywhere && drawn;
    }
    std::printf("%s points, replot after a zoom: mean %.1f ms, worst %.1f ms; %d points handed to the loss graph; "
                "the one-step spike drawn at every zoom: %s\n",
                points, total / replots, worst, chart.drawnPointCount(), spikeEverywhere ? "yes" : "NO");
    plot->xAxis->setRange(all);
    const long rss = rssMiB();
    std::printf("%s points, memory: store %.1f bytes per point (LossChartSeries::memoryBytes; target <= 24), "
                "process %ld MiB RSS (%ld MiB before the run, %.1f bytes per point)\n",
                points, static_cast<double>(chart.series().memoryBytes()) / chart.lossPointCount(), rss, rssBefore,
                (rss - rssBefore) * 1048576.0 / chart.lossPointCount());
}

} // namespace

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    ringmaster::ui::LossChart chart;
    chart.resize(1200, 700);
    chart.show();
    const long rssBefore = rssMiB();

    // 1. 10,000 records/s for 5 s through the real path: a sender thread writes step frames to a
    //    MetricServer socket; the GUI thread parses them and feeds the chart, which drains and replots.
    ringmaster::supervisor::MetricServer server;
    if (!server.listen()) return 1;
    qint64 step = 0;
    QObject::connect(&server, &ringmaster::supervisor::MetricServer::stepReceived, &chart, [&](const ringmaster::supervisor::StepMetric& m) {
        step = m.step;
        chart.append(m);
    });
    double longestReplotMs = 0;
    QElapsedTimer replotClock;
    QObject::connect(chart.plot(), &QCustomPlot::beforeReplot, &chart, [&] { replotClock.start(); });
    QObject::connect(chart.plot(), &QCustomPlot::afterReplot, &chart, [&] {
        longestReplotMs = std::max(longestReplotMs, replotClock.nsecsElapsed() / 1e6);
    });
    std::atomic<bool> sending{true};
    std::thread sender([&] {
        const int fd = ringmaster::bench::connectUnixSocket(server.socketPath());
        // The server checks the pid the hello claims against the connection's (this process).
        ringmaster::bench::sendAll(fd, "{\"v\":1,\"type\":\"hello\",\"rank\":0,\"pid\":" + std::to_string(::getpid()) +
                                           ",\"token\":\"" + server.token().toStdString() + "\"}\n");
        const auto begin = std::chrono::steady_clock::now();
        qint64 sent = 0;
        while (sending) {
            // Pace to 10,000 records/s: 10 records per millisecond.
            const auto due = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begin).count() * 10;
            std::string chunk;
            for (; sent < due; ++sent) {
                const auto m = metric(sent + 1);
                chunk += "{\"v\":1,\"type\":\"step\",\"step\":" + std::to_string(m.step) + ",\"epoch\":" + std::to_string(m.epoch) +
                         ",\"loss\":" + std::to_string(m.loss) + ",\"lr\":0.01,\"samples_per_sec\":8000,\"wall_time\":" +
                         std::to_string(m.wallTime) + "}\n";
            }
            ringmaster::bench::sendAll(fd, chunk);
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        ::close(fd);
    });
    qint64 longestStallUs = 0;
    QElapsedTimer loopClock;
    QTimer probe; // fires every 1 ms; a late firing is a stall of the event loop
    probe.setInterval(1);
    probe.setTimerType(Qt::PreciseTimer);
    QObject::connect(&probe, &QTimer::timeout, &chart, [&] {
        const qint64 gap = loopClock.nsecsElapsed() / 1000;
        loopClock.restart();
        longestStallUs = std::max(longestStallUs, gap);
    });
    QElapsedTimer run;
    run.start();
    loopClock.start();
    probe.start();
    while (run.elapsed() < 5000) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    probe.stop();
    sending = false;
    sender.join();
    chart.flush();
    std::printf("ingest: %lld records in 5 s over the socket (%.0f/s), longest event-loop stall %.1f ms "
                "(target <= 16 ms), longest replot %.1f ms, %d points on the chart\n",
                static_cast<long long>(step), step / 5.0, longestStallUs / 1000.0, longestReplotMs, chart.lossPointCount());

    // 2. Fill to 1,000,000 points (one spike), then time replots of the whole run and after zooms.
    constexpr qint64 kSpikeStep = 654321;
    const auto withSpike = [](qint64 s) {
        auto m = metric(s);
        if (s == kSpikeStep) m.loss = 50.0;
        return m;
    };
    while (step < 1000000 - 3300) chart.append(withSpike(++step));
    chart.flush();
    chart.fit();
    // One drain as the live run makes them: 330 records (10,000/s for 33 ms) added, the view following the
    // run, the visible range reduced again.
    double drainWorst = 0, drainTotal = 0;
    for (int drain = 0; drain < 10; ++drain) {
        for (int i = 0; i < 330; ++i) chart.append(withSpike(++step));
        QElapsedTimer timer;
        timer.start();
        chart.flush();
        const double ms = timer.nsecsElapsed() / 1e6;
        drainWorst = std::max(drainWorst, ms);
        drainTotal += ms;
    }
    std::printf("one drain at 1,000,000 points (330 records added, following the run, range reduced): mean %.2f ms, worst %.2f ms\n",
                drainTotal / 10, drainWorst);
    while (step < 1000000) chart.append(withSpike(++step));
    chart.flush();
    chart.fit();
    report(chart, "1,000,000", rssBefore);

    // 3. The same at 10,000,000 points.
    while (step < 10000000) chart.append(withSpike(++step));
    chart.flush();
    chart.fit();
    report(chart, "10,000,000", rssBefore);
    return 0;
}
