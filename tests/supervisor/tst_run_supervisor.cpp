// RunSupervisor against real ringmaster-trainer processes (2 CPU ranks): the run directory, metrics
// over the socket, a killed rank, a stopped (hung) rank, restarts from a checkpoint, a hostile client.
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "run_supervisor.h"
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
        QCOMPARE(supervisor.rootCause().exitSignal, SIGKILL);
        for (const auto& rank : ranks) QVERIFY(processGone(rank.pid));
        const auto summary = summaryOf(supervisor.runDir());
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(summary.value(QStringLiteral("root_cause_rank")).toInt(), 1);
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
        QVERIFY(waitForFinish(supervisor, 15000));
        QVERIFY2(clock.elapsed() < 3000 + 2000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(supervisor.state(), RunState::Failed);
        QCOMPARE(supervisor.rootCause().rank, 1);
        QVERIFY2(supervisor.rootCause().reason.contains(QStringLiteral("stopped heartbeating")),
                 qPrintable(supervisor.rootCause().reason));
        QVERIFY(supervisor.rootCause().reason.contains(QStringLiteral("process is stopped")));
        QCOMPARE(supervisor.ranks().at(1).state, RankState::Hung);
        for (const auto& rank : ranks) QVERIFY(processGone(rank.pid));
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
        QVERIFY(!readAll(supervisor.runDir() + QStringLiteral("/metrics.csv")).contains(QStringLiteral("12345")));
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
    }
};

QTEST_GUILESS_MAIN(TestRunSupervisor)
#include "tst_run_supervisor.moc"
