// RunSupervisor against real ringmaster-trainer processes (2 CPU ranks): the run directory, metrics
// over the socket, a killed rank, a stopped (hung) rank, restarts from a checkpoint, a hostile client.
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonArray>
#include <QJsonObject>
#include <QLocalSocket>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include <unistd.h>

#include "supervisor/run_supervisor.h"
#include "supervisor/stack_dumps.h"
#include "memory_cgroup.h"
#include "test_support.h"

using namespace ringmaster::supervisor;
using namespace ringmaster::supervisor::test;

namespace {

constexpr int kRunTimeoutMs = 180000;

QJsonObject summaryOf(const QString& runDir)
{
    return QJsonDocument::fromJson(readAll(runDir + QStringLiteral("/summary.json")).toUtf8()).object();
}

bool waitForFinish(RunSupervisor& supervisor, int timeoutMs = kRunTimeoutMs)
{
    return QTest::qWaitFor([&] { return isFinal(supervisor.state()); }, timeoutMs);
}

// A stand-in trainer: a shell script (the body below) that the supervisor launches instead. Its --version
// says what a CUDA build says (pre-flight reads it; a GPU job needs a trainer with CUDA).
QString writeStub(const QString& dir, const QString& body)
{
    const QString path = dir + QStringLiteral("/stub-trainer.sh");
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write("#!/bin/sh\n" R"SH([ "$1" = --version ] && { printf 'ringmaster-trainer 0.1.0\nLibTorch 2.11.0\nCUDA: yes (13.0)\nNCCL: yes (2.28.9)\nGloo: yes\n'; exit 0; })SH" "\n" + body.toUtf8() + "\n");
    file.close();
    file.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    return path;
}

constexpr qint64 kOomLimitBytes = 96ll << 20;

} // namespace

class TestRunSupervisor : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void endToEndRunDirectoryAndSocketMetrics()
    {
        QTemporaryDir root;
        RunSupervisor supervisor;
        QList<StepMetric> steps;
        connect(&supervisor, &RunSupervisor::stepReceived, this, [&](const StepMetric& m) { steps.append(m); });
        QSignalSpy evals(&supervisor, &RunSupervisor::evalReceived);
        QString error;
        QVERIFY2(supervisor.start(cpuJob(root.path(), 50), &error), qPrintable(error));
        const QString socket = supervisor.socketPath();
        QVERIFY(QFileInfo::exists(socket));
        QCOMPARE(QFileInfo(QFileInfo(socket).absolutePath()).permissions() & (QFile::ReadGroup | QFile::ReadOther |
                                                                              QFile::WriteGroup | QFile::WriteOther),
                 QFile::Permissions());
        QVERIFY(waitForFinish(supervisor));
        QCOMPARE(supervisor.state(), RunState::Completed);

        const QString dir = supervisor.runDir();
        for (const char* name : {"job.json", "metrics.csv", "eval.csv", "summary.json", "model.pt", "checkpoints",
                                 "logs/rank-0.log", "logs/rank-1.log", "logs/launcher.log"}) {
            QVERIFY2(QFileInfo::exists(dir + QLatin1Char('/') + QLatin1String(name)), name);
        }
        // The metrics came through the socket, one per step, matching the durable CSV.
        QCOMPARE(steps.size(), 50);
        QCOMPARE(supervisor.stepsReceived(), 50);
        const QStringList losses = csvColumn(dir + QStringLiteral("/metrics.csv"), 2);
        QCOMPARE(losses.size(), 50);
        for (int i = 0; i < 50; ++i) {
            QCOMPARE(steps.at(i).step, i + 1);
            QVERIFY(qAbs(steps.at(i).loss - losses.at(i).toDouble()) < 1e-6);
        }
        QCOMPARE(evals.size(), 1);
        const auto summary = summaryOf(dir);
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("metrics_received_over_socket")).toInt(), 50);
        QVERIFY(readAll(dir + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("metric step=50")));
        QVERIFY(readAll(dir + QStringLiteral("/logs/rank-1.log")).contains(QStringLiteral("rank 1/2")));
        for (const auto& rank : supervisor.ranks()) {
            QCOMPARE(rank.state, RankState::Exited);
            QVERIFY(processGone(rank.pid));
        }
    }

    void killedRankFailsTheRunWithinFiveSeconds()
    {
        QTemporaryDir root;
        RunSupervisor supervisor;
        QString error;
        QVERIFY2(supervisor.start(cpuJob(root.path(), 0, 20), &error), qPrintable(error));
        QVERIFY(QTest::qWaitFor([&] { return supervisor.stepsReceived() >= 3; }, kRunTimeoutMs));
        const auto ranks = supervisor.ranks();
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(::kill(static_cast<pid_t>(ranks.at(1).pid), SIGKILL), 0);
        QVERIFY(waitForFinish(supervisor, 10000));
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(supervisor.state(), RunState::Failed);
        QCOMPARE(supervisor.rootCause().rank, 1);
        QVERIFY2(supervisor.rootCause().reason.contains(QStringLiteral("SIGKILL")), qPrintable(supervisor.rootCause().reason));
        // Ringmaster sent no signal: the reason says so plainly instead of quoting a log line.
        QVERIFY2(supervisor.rootCause().reason.contains(QStringLiteral("which Ringmaster did not send")),
                 qPrintable(supervisor.rootCause().reason));
        QVERIFY2(supervisor.rootCause().reason.contains(QStringLiteral("peak memory")), qPrintable(supervisor.rootCause().reason));
        QCOMPARE(supervisor.rootCause().exitSignal, SIGKILL);
        for (const auto& rank : ranks) QVERIFY(processGone(rank.pid));
        const auto summary = summaryOf(supervisor.runDir());
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(summary.value(QStringLiteral("root_cause_rank")).toInt(), 1);
    }

    void ranksShareAGroupOfTheirOwn()
    {
        QTemporaryDir root;
        RunSupervisor supervisor;
        QString error;
        QVERIFY2(supervisor.start(cpuJob(root.path(), 0, 20), &error), qPrintable(error));
        QVERIFY(QTest::qWaitFor([&] { return supervisor.stepsReceived() >= 1; }, kRunTimeoutMs));
        const qint64 group = supervisor.processGroup();
        QVERIFY(group > 0);
        QVERIFY(group != ::getpgrp()); // not the front end's (the terminal's) group
        for (const auto& rank : supervisor.ranks()) QCOMPARE(static_cast<qint64>(::getpgid(static_cast<pid_t>(rank.pid))), group);
        QCOMPARE(static_cast<qint64>(supervisor.ranks().at(0).pid), group);
        supervisor.kill();
        QVERIFY(waitForFinish(supervisor, 20000));
        // Every rank is reaped: the group id may now be reused by anyone, so it is no longer ours to signal.
        QCOMPARE(supervisor.processGroup(), 0);
    }

    void takenRendezvousPortIsRetriedOnANewPort()
    {
        // Another process takes the port between pre-flight and rank 0's bind: rank 0 exits 3
        // (address in use). That is not bad input: the run goes on, on a new port, and no restart is used.
        QTemporaryDir root;
        const QString stub = writeStub(root.path(), QStringLiteral(R"SH(
for a in "$@"; do [ "$a" = --validate-only ] && exec "$RM_REAL_TRAINER" "$@"; done
if [ "$RANK" = 0 ] && [ ! -e "$RM_MARK" ]; then
  touch "$RM_MARK"
  echo "ringmaster-trainer: error: rendezvous port $MASTER_PORT on 127.0.0.1 is already in use" >&2
  exit 3
fi
exec "$RM_REAL_TRAINER" "$@")SH"));
        qputenv("RM_REAL_TRAINER", trainerPath().toUtf8());
        qputenv("RM_MARK", root.filePath(QStringLiteral("taken")).toUtf8());
        RunSupervisor supervisor;
        JobSpec job = cpuJob(root.path(), 20);
        job.trainerPath = stub;
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        const int firstPort = supervisor.masterPort();
        QVERIFY(waitForFinish(supervisor));
        qunsetenv("RM_REAL_TRAINER");
        qunsetenv("RM_MARK");
        QCOMPARE(supervisor.state(), RunState::Completed);
        QCOMPARE(supervisor.restartCount(), 0);
        QCOMPARE(supervisor.portRetryCount(), 1);
        QVERIFY(supervisor.masterPort() != firstPort);
        QVERIFY(readAll(supervisor.runDir() + QStringLiteral("/logs/launcher.log"))
                    .contains(QStringLiteral("rendezvous port %1 was taken by another process").arg(firstPort)));
        QCOMPARE(csvRows(supervisor.runDir() + QStringLiteral("/metrics.csv")), 20);
    }

    void stackFramesNeverReachTheRootCause()
    {
        // A rank that dies of an uncaught C++ exception prints "terminate called …" and a screenful of
        // frames. The verdict shows the error, not the frames; the rank's log keeps everything.
        QTemporaryDir root;
        const QString stub = writeStub(root.path(), QStringLiteral(R"SH(
for a in "$@"; do [ "$a" = --validate-only ] && exit 0; done
if [ "$RANK" = 0 ]; then
  echo "rank 0/2 pid $$ joined"
  echo "terminate called after throwing an instance of 'c10::Error'" >&2
  echo "  what():  [enforce fail at inline_container.cc:337] . unexpected pos 4416 vs 4310" >&2
  echo "Exception raised from write_record at ../caffe2/serialize/inline_container.cc:337 (most recent call first):" >&2
  i=0; while [ $i -lt 17 ]; do echo "frame #$i: <unknown function> + 0x1c3d (0x7f0 in /usr/lib/libtorch_cpu.so)" >&2; i=$((i+1)); done
  kill -ABRT $$
fi
exec sleep 60)SH"));
        RunSupervisor supervisor;
        JobSpec job = cpuJob(root.path(), 20);
        job.trainerPath = stub;
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        QVERIFY(waitForFinish(supervisor, 30000));
        QCOMPARE(supervisor.state(), RunState::Failed);
        const RootCause cause = supervisor.rootCause();
        QCOMPARE(cause.rank, 0);
        QVERIFY2(cause.reason.contains(QStringLiteral("SIGABRT")), qPrintable(cause.reason));
        const QString shown = cause.lastLines.join(QLatin1Char('\n'));
        QVERIFY2(shown.contains(QStringLiteral("unexpected pos 4416")), qPrintable(shown));
        QVERIFY2(!shown.contains(QStringLiteral("frame #")), qPrintable(shown));
        QVERIFY2(!shown.contains(QStringLiteral("terminate called")), qPrintable(shown));
        const QString summary = readAll(supervisor.runDir() + QStringLiteral("/summary.json"));
        QVERIFY(!summary.contains(QStringLiteral("frame #")));
        QVERIFY(readAll(supervisor.runDir() + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("frame #16:")));
    }

    void outOfMemoryKillIsNamed()
    {
        // The ranks are moved into a memory cgroup far smaller than the dataset they load: the
        // kernel's OOM killer ends one with SIGKILL, and the verdict says so with its peak memory.
        MemoryCgroup cgroup;
        if (const QString why = cgroup.create(kOomLimitBytes); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir root;
        RunSupervisor supervisor;
        JobSpec job = cpuJob(root.path(), 20);
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        for (const auto& rank : supervisor.ranks()) QVERIFY(cgroup.add(rank.pid));
        QVERIFY(waitForFinish(supervisor, 60000));
        QCOMPARE(supervisor.state(), RunState::Failed);
        const RootCause cause = supervisor.rootCause();
        QVERIFY2(cause.reason.contains(QStringLiteral("killed by the out-of-memory killer (peak memory ")),
                 qPrintable(cause.summary()));
        QCOMPARE(cause.exitSignal, SIGKILL);
    }

    void stoppedRankIsReportedHung()
    {
        QTemporaryDir root;
        RunSupervisor supervisor;
        JobSpec job = cpuJob(root.path(), 0, 20);
        job.heartbeatTimeoutSec = 3;
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        QVERIFY(QTest::qWaitFor([&] { return supervisor.stepsReceived() >= 3; }, kRunTimeoutMs));
        const auto ranks = supervisor.ranks();
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(::kill(static_cast<pid_t>(ranks.at(1).pid), SIGSTOP), 0);
        QVERIFY(waitForFinish(supervisor, 15000 + StackDumps::kTimeoutMs));
        // The heartbeat timeout, then at most the stacks' time bound, then the kill.
        QVERIFY2(clock.elapsed() < 3000 + StackDumps::kTimeoutMs + 2000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(supervisor.state(), RunState::Failed);
        QCOMPARE(supervisor.rootCause().rank, 1);
        QVERIFY2(supervisor.rootCause().reason.contains(QStringLiteral("stopped heartbeating")),
                 qPrintable(supervisor.rootCause().reason));
        QVERIFY(supervisor.rootCause().reason.contains(QStringLiteral("process is stopped")));
        QCOMPARE(supervisor.ranks().at(1).state, RankState::Hung);
        for (const auto& rank : ranks) QVERIFY(processGone(rank.pid));

        // Before the kill, every rank's threads' stacks (gdb, installed by scripts/setup.sh): the stopped rank
        // inside the trainer's own code, its peer inside the step it cannot finish without it.
        const QString stacks1 = supervisor.runDir() + QStringLiteral("/logs/rank-1.stacks.txt");
        QVERIFY2(supervisor.rootCause().reason.contains(QStringLiteral("its threads' stacks: ") + stacks1),
                 qPrintable(supervisor.rootCause().reason));
        if (StackDumps::debugger().isEmpty()) QSKIP("gdb is not installed (scripts/setup.sh installs it): no stacks to check");
        const QString launcherLog = readAll(supervisor.runDir() + QStringLiteral("/logs/launcher.log"));
        // Every rank's threads; the trainer's own frames at least in the peer waiting for the stopped rank (the
        // stopped one may be caught inside a JIT kernel that gdb cannot unwind: "?? ()").
        int withTrainerFrames = 0;
        for (int r = 0; r < 2; ++r) {
            const QString text = readAll(supervisor.runDir() + QStringLiteral("/logs/rank-%1.stacks.txt").arg(r));
            QVERIFY2(text.contains(QStringLiteral("Thread 1 ")), qPrintable(text.left(2000)));
            if (text.contains(QStringLiteral("ringmaster::trainer::Trainer::"))) ++withTrainerFrames;
        }
        QVERIFY(withTrainerFrames >= 1);
        QVERIFY2(launcherLog.contains(QStringLiteral("rank 1: ")) && launcherLog.contains(QStringLiteral(" thread(s)' stacks in ") + stacks1),
                 qPrintable(launcherLog.right(3000)));
    }

    void restartResumesFromTheLatestCheckpoint()
    {
        QTemporaryDir root;
        RunSupervisor supervisor;
        JobSpec job = cpuJob(root.path(), 150);
        job.maxRestarts = 1;
        job.setTrainerOption(QStringLiteral("checkpoint-every"), 20);
        QList<qint64> checkpoints;
        QList<qint64> starts;
        connect(&supervisor, &RunSupervisor::checkpointSaved, this, [&](qint64 step, const QString&) { checkpoints.append(step); });
        connect(&supervisor, &RunSupervisor::trainingStarted, this, [&](qint64 step) { starts.append(step); });
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        QVERIFY(QTest::qWaitFor([&] { return !checkpoints.isEmpty() && supervisor.stepsReceived() >= 25; }, kRunTimeoutMs));
        QVERIFY(supervisor.stepsReceived() < 150);
        const auto firstPids = supervisor.ranks();
        QCOMPARE(::kill(static_cast<pid_t>(firstPids.at(1).pid), SIGKILL), 0);
        QVERIFY(waitForFinish(supervisor));
        QCOMPARE(supervisor.state(), RunState::Completed);
        QCOMPARE(supervisor.restartCount(), 1);
        for (const auto& rank : firstPids) QVERIFY(processGone(rank.pid));
        // The restart announced where it resumed: the newest checkpoint before the kill.
        QCOMPARE(starts.size(), 2);
        QCOMPARE(starts.at(0), 0);
        QVERIFY(starts.at(1) >= 20 && checkpoints.contains(starts.at(1)));

        const QString dir = supervisor.runDir();
        const QStringList steps = csvColumn(dir + QStringLiteral("/metrics.csv"), 0);
        QCOMPARE(steps.size(), 150);
        for (int i = 0; i < steps.size(); ++i) QCOMPARE(steps.at(i).toInt(), i + 1); // continued, never repeated
        QVERIFY(readAll(dir + QStringLiteral("/logs/launcher.log")).contains(QStringLiteral("resuming from")));
        QVERIFY(readAll(dir + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("resumed from")));
        const auto summary = summaryOf(dir);
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("restarts")).toInt(), 1);
        QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), 150);
    }

    void hostileClientsChangeNothing()
    {
        QTemporaryDir root;
        RunSupervisor supervisor;
        QList<StepMetric> steps;
        connect(&supervisor, &RunSupervisor::stepReceived, this, [&](const StepMetric& m) { steps.append(m); });
        QString error;
        QVERIFY2(supervisor.start(cpuJob(root.path(), 120), &error), qPrintable(error));
        const QByteArray forged = QByteArrayLiteral("{\"v\":1,\"type\":\"step\",\"step\":99999,\"epoch\":0,\"loss\":12345,"
                                                    "\"lr\":1,\"samples_per_sec\":1,\"wall_time\":1}\n");
        const QList<QByteArray> attacks{
            QByteArrayLiteral("\x00\xff garbage that is not json\n"),
            QByteArray(200 * 1024, 'A'),                                           // a huge frame, no newline
            QByteArrayLiteral("{\"v\":1,\"type\":\"hello\",\"rank\":0,\"pid\":1,\"token\":\"guess\"}\n") + forged,
            forged,                                                                // metrics without a hello
            QByteArrayLiteral("{\"v\":7,\"type\":\"hello\",\"rank\":0,\"pid\":1,\"token\":\"x\"}\n"),
        };
        QList<QLocalSocket*> sockets;
        for (const auto& attack : attacks) {
            auto* socket = new QLocalSocket(this);
            socket->connectToServer(supervisor.socketPath());
            QVERIFY(socket->waitForConnected(5000));
            socket->write(attack);
            socket->flush();
            sockets.append(socket);
        }
        QVERIFY(QTest::qWaitFor([&] { return supervisor.rejectedConnections() >= attacks.size(); }, 20000));
        QVERIFY(waitForFinish(supervisor));
        QCOMPARE(supervisor.state(), RunState::Completed);
        QCOMPARE(steps.size(), 120);
        for (const auto& m : steps) {
            QVERIFY(m.loss != 12345.0);
            QVERIFY(m.step <= 120);
        }
        // Compare parsed columns: a substring check trips on a genuine loss such as 0.01234512.
        const QString csv = supervisor.runDir() + QStringLiteral("/metrics.csv");
        const QStringList csvSteps = csvColumn(csv, 0);
        QCOMPARE(csvSteps.size(), 120);
        for (int i = 0; i < csvSteps.size(); ++i) QCOMPARE(csvSteps.at(i).toInt(), i + 1);
        for (const QString& loss : csvColumn(csv, 2)) QVERIFY(loss.toDouble() != 12345.0);
        QVERIFY(readAll(supervisor.runDir() + QStringLiteral("/logs/launcher.log")).contains(QStringLiteral("rejected a reporting connection")));
        qDeleteAll(sockets);
    }

    void checkpointNowThenDestroyingTheSupervisorKillsEveryRank()
    {
        QTemporaryDir root;
        QList<RankStatus> ranks;
        {
            RunSupervisor supervisor;
            QList<qint64> checkpoints;
            connect(&supervisor, &RunSupervisor::checkpointSaved, this, [&](qint64 step, const QString&) { checkpoints.append(step); });
            QString error;
            QVERIFY2(supervisor.start(cpuJob(root.path(), 0, 20), &error), qPrintable(error));
            QVERIFY(QTest::qWaitFor([&] { return supervisor.stepsReceived() >= 2; }, kRunTimeoutMs));
            // "Checkpoint now": SIGUSR1 to rank 0, a checkpoint after its current step, training goes on.
            supervisor.requestCheckpoint();
            QVERIFY(QTest::qWaitFor([&] { return !checkpoints.isEmpty(); }, 30000));
            QVERIFY(QFileInfo::exists(supervisor.runDir() + QStringLiteral("/checkpoints/step-%1.pt")
                                          .arg(checkpoints.first(), 8, 10, QLatin1Char('0'))));
            QCOMPARE(supervisor.state(), RunState::Running);
            ranks = supervisor.ranks();
        }
        for (const auto& rank : ranks) QVERIFY(processGone(rank.pid));
        // The ranks it killed on the way out are not a failure to report, nor a signal "from outside".
        const QString log = readAll(QDir(root.path()).entryInfoList(QDir::Dirs | QDir::NoDotAndDotDot).first().filePath() +
                                    QStringLiteral("/logs/launcher.log"));
        QVERIFY2(!log.contains(QStringLiteral("FAILED")) && !log.contains(QStringLiteral("did not send")), qPrintable(log));
    }

    void failingRankDuringAStopLeavesTheOthersTheirGracePeriod()
    {
        // Stop: rank 1 exits 1 at once (its peer is going away), rank 0 needs 4 s for its final
        // checkpoint. Rank 0 must get its whole grace period: no second SIGTERM, no SIGKILL after 2 s.
        QTemporaryDir root;
        const QString stub = writeStub(root.path(), QStringLiteral(R"SH(
for a in "$@"; do [ "$a" = --validate-only ] && exit 0; done
if [ "$RANK" = 0 ]; then
  trap 'sleep 4; touch "$RM_MARK"; exit 0' TERM
else
  trap 'echo "a peer rank died" >&2; exit 1' TERM
fi
echo "rank $RANK/2 pid $$ joined"
while true; do sleep 0.1; done)SH"));
        qputenv("RM_MARK", root.filePath(QStringLiteral("final-checkpoint")).toUtf8());
        RunSupervisor supervisor;
        JobSpec job = cpuJob(root.path(), 20);
        job.trainerPath = stub;
        job.gracePeriodSec = 20;
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        // "joined" is printed after the trap is set: a stop before that would meet the default SIGTERM.
        for (const char* log : {"/logs/rank-0.log", "/logs/rank-1.log"}) {
            QVERIFY(QTest::qWaitFor([&] { return readAll(supervisor.runDir() + QLatin1String(log)).contains(QStringLiteral("joined")); }, 20000));
        }
        supervisor.requestStop();
        QVERIFY(waitForFinish(supervisor, 30000));
        qunsetenv("RM_MARK");
        QCOMPARE(supervisor.state(), RunState::Stopped);
        QVERIFY2(QFileInfo::exists(root.filePath(QStringLiteral("final-checkpoint"))), "rank 0 was cut off in its grace period");
        QCOMPARE(supervisor.ranks().at(0).exitCode, 0);
        QCOMPARE(supervisor.ranks().at(0).exitSignal, 0);
    }

    // A GPU launch records in commands.json the GPUs the ranks got, as NVML names them, and the driver's
    // version: here from the stand-in NVML (tests/ui/fake_nvml.c, four invented GPUs); environment.json of
    // a bundle reads them from there (runs.tst_run_export). The ranks are a stub: no GPU is needed.
    void gpuLaunchRecordsWhatNvmlSaw()
    {
        QTemporaryDir root;
        const QString stub = writeStub(root.path(), QStringLiteral("for a in \"$@\"; do [ \"$a\" = --validate-only ] && exit 0; done\nexit 0"));
        qputenv("RINGMASTER_NVML_LIBRARY", qgetenv("RINGMASTER_FAKE_NVML"));
        const auto restore = qScopeGuard([] { qunsetenv("RINGMASTER_NVML_LIBRARY"); });
        qunsetenv("CUDA_VISIBLE_DEVICES");   // all four GPUs usable, in NVML's order
        RunSupervisor supervisor;
        JobSpec job = cpuJob(root.path(), 20);
        job.device = QStringLiteral("cuda");
        job.gpus = {2, 0};
        job.trainerPath = stub;
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        QVERIFY(waitForFinish(supervisor, 30000));
        const QJsonObject hardware = readJson(supervisor.runDir() + QStringLiteral("/commands.json")).value(QStringLiteral("hardware")).toObject();
        const QJsonArray gpus = hardware.value(QStringLiteral("gpus")).toArray();
        QCOMPARE(gpus.size(), 2);
        QCOMPARE(gpus[0].toObject(), (QJsonObject{{QStringLiteral("rank"), 0}, {QStringLiteral("index"), 2}, {QStringLiteral("name"), QStringLiteral("Fake GPU 2")}}));
        QCOMPARE(gpus[1].toObject(), (QJsonObject{{QStringLiteral("rank"), 1}, {QStringLiteral("index"), 0}, {QStringLiteral("name"), QStringLiteral("Fake GPU 0")}}));
        QCOMPARE(hardware.value(QStringLiteral("driver_version")).toString(), QStringLiteral("555.42.06"));
        // An NCCL run's ranks get PyTorch's flight recorder, dumping into the run directory (script_environment.h).
        const QJsonObject rankEnvironment = readJson(supervisor.runDir() + QStringLiteral("/commands.json"))
                                                .value(QStringLiteral("ranks")).toArray().at(1).toObject()
                                                .value(QStringLiteral("environment")).toObject();
        const QString stem = supervisor.runDir() + QStringLiteral("/logs/nccl-trace-rank-");
        QCOMPARE(rankEnvironment.value(QStringLiteral("TORCH_NCCL_DUMP_ON_TIMEOUT")).toString(), QStringLiteral("1"));
        QCOMPARE(rankEnvironment.value(QStringLiteral("TORCH_FR_DUMP_TEMP_FILE")).toString(), stem);
        QCOMPARE(rankEnvironment.value(QStringLiteral("TORCH_NCCL_DEBUG_INFO_PIPE_FILE")).toString(), stem);

        // A CPU launch saw no GPU and records none.
        QTemporaryDir cpuRoot;
        RunSupervisor cpu;
        JobSpec cpuOnly = cpuJob(cpuRoot.path(), 20);
        cpuOnly.trainerPath = writeStub(cpuRoot.path(), QStringLiteral("for a in \"$@\"; do [ \"$a\" = --validate-only ] && exit 0; done\nexit 0"));
        QVERIFY2(cpu.start(cpuOnly, &error), qPrintable(error));
        QVERIFY(waitForFinish(cpu, 30000));
        const QJsonObject commands = readJson(cpu.runDir() + QStringLiteral("/commands.json"));
        QCOMPARE(commands.value(QStringLiteral("ranks")).toArray().size(), 2);
        QVERIFY(!commands.contains(QStringLiteral("hardware")));
        QVERIFY(!commands.value(QStringLiteral("ranks")).toArray().at(0).toObject().value(QStringLiteral("environment")).toObject()
                     .contains(QStringLiteral("TORCH_FR_DUMP_TEMP_FILE")));
    }

    // The façade passes on what the backend says about a scheduler's queue: Slurm's job id and its last
    // word on the job ("PENDING (Resources)"), here through attach() to a run whose Slurm tools are stubs
    // first on PATH; a run on this machine has neither.
    void slurmQueueStateThroughTheFacade()
    {
        QTemporaryDir root;
        const QString bin = root.filePath(QStringLiteral("bin"));
        QVERIFY(QDir().mkpath(bin));
        for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel", "sinfo"}) {
            // Each stub prints TOOL.out from its own folder (what the test wrote there), nothing else.
            QVERIFY(!writeFile(bin + QLatin1Char('/') + QLatin1String(tool),
                               "#!/bin/sh\nd=$(dirname \"$0\"); n=$(basename \"$0\")\ncat \"$d/$n.out\" 2>/dev/null\nexit 0\n", true)
                         .isEmpty());
        }
        writeFile(bin + QStringLiteral("/squeue.out"), "PENDING|Resources\n");
        const QString runDir = root.filePath(QStringLiteral("20261130-101500-cnn"));
        QVERIFY(QDir().mkpath(runDir));
        writeFile(runDir + QStringLiteral("/job.json"),
                  R"({"version": 1, "launch": {"device": "cpu", "nproc": 2, "slurm": {"nodes": 1, "job_id": "57"}}, "trainer": {}})");
        const QByteArray path = qgetenv("PATH");
        qputenv("PATH", bin.toUtf8() + ':' + path);
        RunSupervisor supervisor;
        QCOMPARE(supervisor.jobId(), QString());
        QCOMPARE(supervisor.queueState(), QString());
        QString error;
        const bool attached = supervisor.attach(runDir, &error);
        if (attached) {
            QTRY_COMPARE_WITH_TIMEOUT(supervisor.queueState(), QStringLiteral("PENDING (Resources)"), 20000);
            QCOMPARE(supervisor.jobId(), QStringLiteral("57"));
            // Stop while queued: the job is cancelled, and the run ends once Slurm says so.
            supervisor.requestStop();
            writeFile(bin + QStringLiteral("/squeue.out"), "");
            writeFile(bin + QStringLiteral("/scontrol.out"), "JobId=57 JobState=CANCELLED Reason=None ExitCode=0:15\n");
            QVERIFY(waitForFinish(supervisor, 20000));
            QCOMPARE(supervisor.state(), RunState::Stopped);
        }
        qputenv("PATH", path);
        QVERIFY2(attached, qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TestRunSupervisor)
#include "tst_run_supervisor.moc"
