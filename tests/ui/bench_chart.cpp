// Chart benchmark (prints figures; asserts nothing):
//  - the event loop's longest stall while 10,000 metric records/s arrive over a real socket for 5 s,
//  - replot time of the loss chart with 1,000,000 points,
//  - the process's memory with 1,000,000 points.
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

#include "loss_chart.h"
#include "metric_server.h"
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
        ringmaster::bench::sendAll(fd, "{\"v\":1,\"type\":\"hello\",\"rank\":0,\"pid\":1,\"token\":\"" + server.token().toStdString() + "\"}\n");
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

    // 2. Fill to 1,000,000 points and time full replots.
    while (step < 1000000) chart.append(metric(++step));
    chart.flush();
    chart.fit();
    QCustomPlot* plot = chart.plot();
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
    std::printf("replot with %d loss points (+ smoothed): mean %.1f ms, worst %.1f ms (target <= 30 ms)\n",
                chart.lossPointCount(), total / replots, worst);
    std::printf("memory: %ld MiB RSS with 1,000,000 points (%ld MiB before)\n", rssMiB(), rssBefore);
    return 0;
}
