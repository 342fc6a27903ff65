// Chart benchmark (prints figures; asserts nothing):
//  - replot time of the loss chart with 1,000,000 points,
//  - the event loop's longest stall while 10,000 metric records/s arrive for 5 s,
//  - the process's memory with 1,000,000 points.
// Run: QT_QPA_PLATFORM=offscreen build/tests/ui/bench_chart
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>

#include <cmath>
#include <cstdio>

#include "loss_chart.h"
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

    // 1. Ingest-rate stall test: 10,000 records/s (100 every 10 ms) for 5 s through the real path.
    qint64 step = 0;
    qint64 longestStallUs = 0;
    QElapsedTimer loopClock;
    QTimer producer;
    producer.setInterval(10);
    QObject::connect(&producer, &QTimer::timeout, &chart, [&] {
        for (int i = 0; i < 100; ++i) chart.append(metric(++step));
    });
    QTimer probe; // fires every 1 ms; a late firing is a stall of the event loop
    probe.setInterval(1);
    probe.setTimerType(Qt::PreciseTimer);
    QObject::connect(&probe, &QTimer::timeout, &chart, [&] {
        const qint64 gap = loopClock.nsecsElapsed() / 1000;
        loopClock.restart();
        longestStallUs = std::max(longestStallUs, gap);
    });
    loopClock.start();
    producer.start();
    probe.start();
    QElapsedTimer run;
    run.start();
    while (run.elapsed() < 5000) QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
    producer.stop();
    probe.stop();
    chart.flush();
    std::printf("ingest: %lld records in 5 s (%.0f/s), longest event-loop stall %.1f ms (target <= 16 ms)\n",
                static_cast<long long>(step), step / 5.0, longestStallUs / 1000.0);

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
