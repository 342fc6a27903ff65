// Reporting benchmark (prints figures; asserts nothing):
//  1. supervisor ingest: records/s the MetricServer sustains from synthetic senders, and how many were lost;
//  2. the trainer's cost of reporting: Reporter::send per step against a step's time;
//  3. launch latency: RunSupervisor::start() to the first metric on the socket, default job (2 CPU ranks).
// Run: build/tests/bench_socket   (RINGMASTER_TRAINER must point at ringmaster-trainer for part 3)
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>

#include <unistd.h>

#include "protocol/wire.h"
#include "supervisor/metric_server.h"
#include "raw_socket.h"
#include "trainer/reporter.h"
#include "supervisor/run_supervisor.h"

using namespace ringmaster;

namespace {

constexpr qint64 kRecords = 1000000;
constexpr int kReporterSends = 200000;
constexpr double kTypicalStepMs = 15.0; // cnn, batch 64, 1 thread per rank on this machine (see docs/performance.md)

void ingest()
{
    supervisor::MetricServer server;
    if (!server.listen()) return;
    qint64 received = 0;
    QObject::connect(&server, &supervisor::MetricServer::stepReceived, &server, [&](const supervisor::StepMetric&) { ++received; });
    std::thread sender([&] {
        const int fd = bench::connectUnixSocket(server.socketPath());
        bench::sendAll(fd, "{\"v\":1,\"type\":\"hello\",\"rank\":0,\"pid\":1,\"token\":\"" + server.token().toStdString() + "\"}\n");
        std::string chunk;
        for (qint64 step = 1; step <= kRecords; ++step) {
            chunk += "{\"v\":1,\"type\":\"step\",\"step\":" + std::to_string(step) +
                     ",\"epoch\":0,\"loss\":0.6931,\"lr\":0.01,\"samples_per_sec\":8000,\"wall_time\":12.5}\n";
            if (chunk.size() > 60000) {
                bench::sendAll(fd, chunk);
                chunk.clear();
            }
        }
        bench::sendAll(fd, chunk);
        ::close(fd);
    });
    QElapsedTimer clock;
    clock.start();
    while (received < kRecords && clock.elapsed() < 120000) QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    const double seconds = clock.nsecsElapsed() / 1e9;
    sender.join();
    std::printf("ingest: %lld of %lld records in %.2f s = %.0f records/s, %lld lost (target >= 100000/s, none lost)\n",
                static_cast<long long>(received), static_cast<long long>(kRecords), seconds, received / seconds,
                static_cast<long long>(kRecords - received));
}

void reporterCost()
{
    supervisor::MetricServer server;
    if (!server.listen()) return;
    qint64 received = 0;
    QObject::connect(&server, &supervisor::MetricServer::stepReceived, &server, [&](const supervisor::StepMetric&) { ++received; });
    std::atomic<bool> done{false};
    double perSendUs = 0;
    std::uint64_t dropped = 0;
    std::thread trainer([&] {
        trainer::Reporter reporter(server.socketPath().toStdString(), server.token().toStdString(), 0);
        QElapsedTimer clock;
        clock.start();
        for (int step = 1; step <= kReporterSends; ++step) {
            // What a rank-0 step does: one step frame and publishing its progress for the heartbeat timer.
            reporter.send({{protocol::kKeyType, protocol::kTypeStep}, {protocol::kKeyStep, step}, {protocol::kKeyEpoch, 0},
                           {protocol::kKeyLoss, 0.6931}, {protocol::kKeyLr, 0.01}, {protocol::kKeySamplesPerSec, 8000.0},
                           {protocol::kKeyWallTime, step * 0.015}});
            reporter.setProgress(step, trainer::Phase::Train);
        }
        perSendUs = clock.nsecsElapsed() / 1e3 / kReporterSends;
        dropped = reporter.dropped();
        done = true;
    });
    // The Reporter gives up on unsent frames 1 s after it is destroyed (a trainer never hangs on
    // exit), so wait for the thread, then at most 10 s more for what is still in flight.
    while (!done) QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    trainer.join();
    QElapsedTimer settle;
    settle.start();
    while (received + static_cast<qint64>(dropped) < kReporterSends && settle.elapsed() < 10000) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    }
    std::printf("reporting cost in the trainer: %.2f us per step (send + progress), %.4f%% of a %.0f ms step "
                "(target < 1%%); sending flat out, %llu of %d step frames arrived and %llu were dropped by the "
                "bounded queue (drop-oldest)\n",
                perSendUs, perSendUs / (kTypicalStepMs * 10.0), kTypicalStepMs, static_cast<unsigned long long>(received),
                kReporterSends, static_cast<unsigned long long>(dropped));
}

void launchLatency()
{
    if (qEnvironmentVariableIsEmpty("RINGMASTER_TRAINER")) {
        std::printf("launch latency: skipped (set RINGMASTER_TRAINER)\n");
        return;
    }
    for (int run = 0; run < 3; ++run) {
        QTemporaryDir root;
        supervisor::RunSupervisor supervisor;
        auto job = supervisor::defaultJob(0);
        job.outputRoot = root.path();
        job.setTrainerOption(QStringLiteral("max_steps"), 5);
        qint64 firstMetricMs = -1;
        QElapsedTimer clock;
        QObject::connect(&supervisor, &supervisor::RunSupervisor::stepReceived, &supervisor, [&](const supervisor::StepMetric&) {
            if (firstMetricMs < 0) firstMetricMs = clock.elapsed();
        });
        QString error;
        clock.start();
        if (!supervisor.start(job, &error)) {
            std::printf("launch latency: %s\n", qPrintable(error));
            return;
        }
        if (!QTest::qWaitFor([&] { return supervisor::isFinal(supervisor.state()); }, 120000)) {
            std::printf("launch latency, run %d: the run did not finish within 120 s\n", run + 1);
        }
        std::printf("launch latency, run %d: %lld ms from start() to the first metric on the socket "
                    "(pre-flight, spawn, data load, rendezvous, first step)\n", run + 1, static_cast<long long>(firstMetricMs));
    }
}

} // namespace

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    ingest();
    reporterCost();
    launchLatency();
    return 0;
}
