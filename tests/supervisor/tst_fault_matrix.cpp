// The fault matrix of issue 13 against real processes (nothing mocked): kill -9 of each rank of a 2-rank
// CPU run at a seeded random step and in the middle of a checkpoint write, without and with a restart;
// the run directory deleted under a live ringmaster-launch; two launchers at once on this machine. After
// every case: no ringmaster process of the test is left (checked by pid, and by scanning /proc), no
// partial file (*.tmp*) remains, and summary.json, the root cause and the exit code say what happened.
// The random steps come from one seed, printed; RINGMASTER_FAULT_SEED=N draws the same steps again.
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "supervisor/run_supervisor.h"
#include "test_support.h"

using namespace ringmaster::supervisor;
using namespace ringmaster::supervisor::test;

namespace {

constexpr int kRunTimeoutMs = 180000;
constexpr qint64 kMaxSteps = 300;       // the mlp takes about 1 ms a step: the whole run is well under a second of training
constexpr int kCheckpointEvery = 10;
constexpr qint64 kStallStep = 30;       // the checkpoint the trainer's test hook holds mid-write
constexpr const char* kStallVariable = "RINGMASTER_TEST_STALL_CHECKPOINT"; // core/trainer/checkpoint.cpp

// The smallest real job that still trains, checkpoints and evaluates: the mlp on Fashion-MNIST, with 1%
// held out for validation (600 samples instead of the 10,000 of the test split).
JobSpec smallJob(const QString& root, qint64 maxSteps)
{
    JobSpec job = cpuJob(root, maxSteps);
    job.setTrainerOption(QStringLiteral("model"), QStringLiteral("mlp"));
    job.setTrainerOption(QStringLiteral("batch-size"), 32);
    job.setTrainerOption(QStringLiteral("val-split"), 0.01);
    job.setTrainerOption(QStringLiteral("checkpoint-every"), kCheckpointEvery);
    return job;
}

bool waitForFinish(RunSupervisor& supervisor, int timeoutMs = kRunTimeoutMs)
{
    return QTest::qWaitFor([&] { return isFinal(supervisor.state()); }, timeoutMs);
}

QString checkpointPath(const QString& dir, qint64 step)
{
    return dir + QStringLiteral("/checkpoints/step-%1.pt").arg(step, 8, 10, QLatin1Char('0'));
}

// The newest complete checkpoint (step-N.pt: a rename makes it appear whole), or -1.
qint64 newestCheckpoint(const QString& dir)
{
    const auto names = QDir(dir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("step-*.pt")}, QDir::Files, QDir::Name);
    return names.isEmpty() ? -1 : names.last().mid(5, 8).toLongLong();
}

QList<qint64> oneTo(qint64 last)
{
    QList<qint64> steps;
    for (qint64 step = 1; step <= last; ++step) steps.append(step);
    return steps;
}

quint64 g_seed = 0;

} // namespace

class TestFaultMatrix : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        bool given = false;
        g_seed = qEnvironmentVariable("RINGMASTER_FAULT_SEED").toULongLong(&given);
        if (!given) g_seed = static_cast<quint64>(QDateTime::currentMSecsSinceEpoch());
        qInfo("fault seed %llu (RINGMASTER_FAULT_SEED=%llu repeats these kill steps)", g_seed, g_seed);
        QVERIFY(!trainerPath().isEmpty());
    }

    void killedRankFailsTheRun_data()
    {
        QTest::addColumn<int>("rank");
        QTest::addColumn<bool>("midCheckpoint");
        QTest::newRow("rank 1 at a random step") << 1 << false;
        QTest::newRow("rank 0 in the middle of a checkpoint write") << 0 << true;
    }

    // kill -9 of one rank, no restart: the run fails naming that rank, every pid is gone, and the
    // partial checkpoint rank 0 was writing is removed (said in the launcher's log), never a checkpoint.
    void killedRankFailsTheRun()
    {
        QFETCH(int, rank);
        QFETCH(bool, midCheckpoint);
        QTemporaryDir root;
        QRandomGenerator random(g_seed ^ qHash(QByteArray(QTest::currentDataTag())));
        const qint64 killStep = midCheckpoint ? kStallStep : 12 + random.bounded(49); // 12..60 of 300
        qInfo("seed %llu: kill -9 rank %d %s", g_seed, rank,
              qPrintable(midCheckpoint ? QStringLiteral("while it writes the checkpoint of step %1").arg(killStep)
                                       : QStringLiteral("once step %1 is reported").arg(killStep)));
        // The trainer's test hook holds the checkpoint of kStallStep after its first bytes.
        if (midCheckpoint) qputenv(kStallVariable, QByteArray::number(kStallStep));
        const auto unsetHook = qScopeGuard([] { qunsetenv(kStallVariable); });
        RunSupervisor supervisor;
        qint64 killedPid = 0;
        auto killNow = [&] {
            killedPid = supervisor.ranks().at(rank).pid;
            QCOMPARE(::kill(static_cast<pid_t>(killedPid), SIGKILL), 0);
        };
        connect(&supervisor, &RunSupervisor::stepReceived, this, [&](const StepMetric& metric) {
            if (!midCheckpoint && killedPid == 0 && metric.step >= killStep) killNow();
        });
        QString error;
        QVERIFY2(supervisor.start(smallJob(root.path(), kMaxSteps), &error), qPrintable(error));
        const QString dir = supervisor.runDir();
        const auto ranks = supervisor.ranks();
        if (midCheckpoint) {
            const QString partial = checkpointPath(dir, kStallStep) + QStringLiteral(".tmp-%1").arg(ranks.at(0).pid);
            QVERIFY2(QTest::qWaitFor([&] { return QFileInfo(partial).size() > 0 || isFinal(supervisor.state()); }, kRunTimeoutMs),
                     "the checkpoint write never began");
            QVERIFY(QFileInfo::exists(checkpointPath(dir, kStallStep - kCheckpointEvery)));
            QVERIFY(!QFileInfo::exists(checkpointPath(dir, kStallStep)));
            killNow();
        }
        QVERIFY(waitForFinish(supervisor));
        QVERIFY2(killedPid != 0, "the run ended before the kill");

        QCOMPARE(supervisor.state(), RunState::Failed);
        const RootCause cause = supervisor.rootCause();
        const QString killed = QStringLiteral("rank %1 killed by signal 9 (SIGKILL)").arg(rank);
        QCOMPARE(cause.rank, rank);
        QVERIFY2(cause.summary().startsWith(killed) && cause.reason.contains(QStringLiteral("which Ringmaster did not send")),
                 qPrintable(cause.summary()));
        for (const auto& r : ranks) QVERIFY2(processGone(r.pid), qPrintable(QString::number(r.pid)));
        QCOMPARE(ringmasterProcesses(root.path()), QList<qint64>());
        QCOMPARE(tempFilesUnder(dir), QStringList());
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(summary.value(QStringLiteral("root_cause_rank")).toInt(), rank);
        QVERIFY(summary.value(QStringLiteral("root_cause")).toString().startsWith(killed));
        QVERIFY(csvRows(dir + QStringLiteral("/metrics.csv")) < kMaxSteps);
        if (midCheckpoint) {
            const QString launcherLog = readAll(dir + QStringLiteral("/logs/launcher.log"));
            QVERIFY2(launcherLog.contains(QStringLiteral("removed %1.tmp-%2, a partial file rank 0 was writing")
                                              .arg(checkpointPath(dir, kStallStep)).arg(killedPid)),
                     qPrintable(launcherLog));
            QCOMPARE(newestCheckpoint(dir), kStallStep - kCheckpointEvery); // the partial one never became a checkpoint
            QCOMPARE(csvSteps(dir + QStringLiteral("/metrics.csv")), oneTo(kStallStep));
        }
    }

    // One run, --max-restarts 3, three kills -9: rank 0 at a random step, then rank 1 at a random step
    // of the second launch, then rank 0 in the middle of a checkpoint write in the third. Each restart
    // names the killed rank and resumes from the newest complete checkpoint there was (never a partial
    // one, and no partial file is left); the run completes with each step once in metrics.csv, and no
    // pid of any launch is left.
    void eachRankInTurnResumesFromTheNewestCompleteCheckpoint()
    {
        QTemporaryDir root;
        QRandomGenerator random(g_seed);
        const qint64 firstKill = 12 + random.bounded(49);  // 12..60 of 300
        const qint64 secondKill = 12 + random.bounded(49); // that many steps after the first restart's resume
        qInfo("seed %llu: kill -9 rank 0 once step %lld is reported, then rank 1 %lld steps after the restart's "
              "resume, then rank 0 while it writes a checkpoint", g_seed, firstKill, secondKill);
        JobSpec job = smallJob(root.path(), kMaxSteps);
        job.maxRestarts = 3;
        const auto unsetHook = qScopeGuard([] { qunsetenv(kStallVariable); });
        RunSupervisor supervisor;
        QList<qint64> pids; // every rank of every launch
        QList<qint64> starts;
        QList<qint64> newestAtRelaunch;
        QStringList tempFilesAtRelaunch;
        int kills = 0;
        qint64 stallStep = 0;
        connect(&supervisor, &RunSupervisor::rankChanged, this, [&](int r) {
            const qint64 pid = supervisor.ranks().value(r).pid;
            if (pid > 0 && !pids.contains(pid)) pids.append(pid);
        });
        connect(&supervisor, &RunSupervisor::trainingStarted, this, [&](qint64 from) { starts.append(from); });
        connect(&supervisor, &RunSupervisor::stateChanged, this, [&](RunState state) {
            // "starting" again after a kill: what the relaunched ranks will find in checkpoints/.
            if (state != RunState::Starting || kills == 0) return;
            newestAtRelaunch.append(newestCheckpoint(supervisor.runDir()));
            tempFilesAtRelaunch << tempFilesUnder(supervisor.runDir());
        });
        auto kill = [&](int rank) {
            ++kills;
            QCOMPARE(::kill(static_cast<pid_t>(supervisor.ranks().at(rank).pid), SIGKILL), 0);
        };
        connect(&supervisor, &RunSupervisor::stepReceived, this, [&](const StepMetric& metric) {
            if (kills == 0 && metric.step >= firstKill) return kill(0);
            // Frames of a killed launch never reach this far: they stop before its newest checkpoint + 10.
            if (kills == 1 && starts.size() == 2 && metric.step >= starts.at(1) + secondKill) {
                kill(1);
                // The third launch holds the first checkpoint well past anything written so far; set
                // before the event loop relaunches, so only that launch inherits the hook.
                stallStep = (metric.step / kCheckpointEvery + 5) * kCheckpointEvery;
                qputenv(kStallVariable, QByteArray::number(stallStep));
            }
        });
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        const QString dir = supervisor.runDir();
        QVERIFY2(QTest::qWaitFor([&] {
                     if (kills != 2 || starts.size() != 3 || supervisor.ranks().isEmpty()) return isFinal(supervisor.state());
                     const qint64 pid = supervisor.ranks().at(0).pid;
                     return QFileInfo(checkpointPath(dir, stallStep) + QStringLiteral(".tmp-%1").arg(pid)).size() > 0;
                 }, kRunTimeoutMs),
                 "the third launch never began the held checkpoint");
        QVERIFY2(!isFinal(supervisor.state()), "the run ended before the third kill");
        QVERIFY(!QFileInfo::exists(checkpointPath(dir, stallStep)));
        qunsetenv(kStallVariable); // before the event loop relaunches: the fourth launch writes it normally
        kill(0);
        QVERIFY(waitForFinish(supervisor));

        QCOMPARE(supervisor.state(), RunState::Completed);
        QCOMPARE(supervisor.restartCount(), 3);
        QCOMPARE(pids.size(), 8);
        for (const qint64 pid : pids) QVERIFY2(processGone(pid), qPrintable(QString::number(pid)));
        QCOMPARE(ringmasterProcesses(root.path()), QList<qint64>());
        QCOMPARE(tempFilesUnder(dir), QStringList());
        QCOMPARE(tempFilesAtRelaunch, QStringList());
        const QString launcherLog = readAll(dir + QStringLiteral("/logs/launcher.log"));
        int restart = 0;
        for (const int rank : {0, 1, 0}) {
            ++restart;
            QVERIFY2(launcherLog.contains(QStringLiteral("restart %1 of 3 after: rank %2 killed by signal 9 (SIGKILL)").arg(restart).arg(rank)),
                     qPrintable(launcherLog));
        }
        QVERIFY2(launcherLog.contains(QStringLiteral("removed %1.tmp-").arg(checkpointPath(dir, stallStep))), qPrintable(launcherLog));
        // Each launch began at the newest complete checkpoint there was when it was relaunched.
        QCOMPARE(starts.size(), 4);
        QCOMPARE(starts.at(0), 0);
        QCOMPARE(newestAtRelaunch.size(), 3);
        for (int i = 0; i < 3; ++i) {
            QVERIFY(newestAtRelaunch.at(i) >= kCheckpointEvery);
            QCOMPARE(starts.at(i + 1), newestAtRelaunch.at(i));
        }
        QCOMPARE(starts.at(3), stallStep - kCheckpointEvery); // not the partial one
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QVERIFY(summary.value(QStringLiteral("resumed_from")).toString().endsWith(
            QStringLiteral("step-%1.pt").arg(stallStep - kCheckpointEvery, 8, 10, QLatin1Char('0'))));
        QCOMPARE(csvSteps(dir + QStringLiteral("/metrics.csv")), oneTo(kMaxSteps)); // each step once, in order
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), kMaxSteps);
        QCOMPARE(summary.value(QStringLiteral("restarts")).toInt(), 3);
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/model.pt")));
    }

    // rm -rf of the run directory while ringmaster-launch trains: the run fails at once with one line
    // naming the directory, every rank is gone, the launcher exits 1, and nothing recreates the folder.
    void runDirectoryDeletedMidRun()
    {
        QTemporaryDir root;
        LaunchProcess launch;
        launch.start({QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--output-root"), root.path(),
                      QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--model"), QStringLiteral("mlp"),
                      QStringLiteral("--batch-size"), QStringLiteral("32"), QStringLiteral("--val-split"), QStringLiteral("0.01"),
                      QStringLiteral("--epochs"), QStringLiteral("100"), QStringLiteral("--checkpoint-every"), QStringLiteral("10"),
                      QStringLiteral("--log-every"), QStringLiteral("1000000")});
        QVERIFY(launch.waitForOutput(QStringLiteral("state: running"), kRunTimeoutMs));
        const QString dir = launch.runDir();
        QVERIFY(!dir.isEmpty());
        QVERIFY(QTest::qWaitFor([&] { return QFileInfo::exists(checkpointPath(dir, 20)); }, kRunTimeoutMs));
        const auto pids = trainerPids(dir);
        QCOMPARE(pids.size(), 2);
        QElapsedTimer clock;
        clock.start();
        // The trainer may rename a checkpoint into the folder while it is being removed: remove until gone.
        QVERIFY(QTest::qWaitFor([&] { QDir(dir).removeRecursively(); return !QFileInfo::exists(dir); }, 10000));
        QVERIFY2(launch.finish(15000), qPrintable(launch.output));
        const qint64 ms = clock.elapsed();
        qInfo("ringmaster-launch exited %lld ms after the run directory was deleted", ms);
        QCOMPARE(launch.process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(launch.process.exitCode(), 1);
        QVERIFY2(ms < 5000, qPrintable(QString::number(ms)));
        QVERIFY2(launch.output.contains(QStringLiteral("FAILED: the run directory %1 was deleted while the run was active").arg(dir)),
                 qPrintable(launch.output));
        QVERIFY2(!launch.output.contains(QStringLiteral("logs: ")), qPrintable(launch.output)); // no pointer to logs that are gone
        for (const qint64 pid : pids) QVERIFY(processGone(pid));
        QCOMPARE(ringmasterProcesses(root.path()), QList<qint64>());
        QVERIFY2(!QFileInfo::exists(dir), "the deleted run directory was recreated");
    }

    // Two launchers at once, 2 ranks each, different step counts and learning rates: distinct run
    // directories, rendezvous ports, sockets and shared-memory segments, and each run's files and
    // socket count hold exactly its own steps. Each run's rank 0 is held (SIGSTOP) once its group is
    // set up, so the four ranks are certainly alive together while they are inspected.
    void twoRunsAtOnce()
    {
        QTemporaryDir root;
        struct Run
        {
            qint64 steps = 0;
            QString lr;
            LaunchProcess launch;
            QString dir;
            QList<qint64> pids;
        };
        // Most of two epochs (929 steps each at 2 ranks; a second or more of training): a run must still be there when
        // the test finds its group (at 270 steps one finished within a tenth of a second, before it was seen).
        Run runs[2];
        runs[0].steps = 1500;
        runs[0].lr = QStringLiteral("0.01");
        runs[1].steps = 1700;
        runs[1].lr = QStringLiteral("0.02");
        for (Run& run : runs) {
            run.launch.start({QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--output-root"), root.path(),
                              QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--model"), QStringLiteral("mlp"),
                              QStringLiteral("--batch-size"), QStringLiteral("32"), QStringLiteral("--val-split"), QStringLiteral("0.01"),
                              QStringLiteral("--max-steps"), QString::number(run.steps), QStringLiteral("--lr"), run.lr,
                              QStringLiteral("--epochs"), QStringLiteral("2")});
        }
        const auto resume = qScopeGuard([&] {
            for (const Run& run : runs) {
                if (!run.pids.isEmpty()) ::kill(static_cast<pid_t>(run.pids.first()), SIGCONT);
            }
        });
        // Both runs watched in one loop, so neither trains unseen while the test waits for the other: once a run's
        // two ranks joined and mapped their shared segment (the group is set up), its rank 0 is held there.
        bool held[2] = {false, false};
        const bool bothHeld = QTest::qWaitFor([&] {
            for (int r = 0; r < 2; ++r) {
                Run& run = runs[r];
                run.launch.read();
                if (held[r] || run.launch.process.state() == QProcess::NotRunning) continue; // an early end: said below
                if (run.dir.isEmpty()) run.dir = run.launch.runDir();
                if (run.dir.isEmpty()) continue;
                run.pids = trainerPids(run.dir);
                if (run.pids.size() != 2 || sharedMemorySegmentOf(run.pids.at(0)).isEmpty() ||
                    sharedMemorySegmentOf(run.pids.at(1)).isEmpty()) {
                    continue;
                }
                if (environmentOf(run.pids.at(0), QStringLiteral("RANK")) != QLatin1String("0")) std::swap(run.pids[0], run.pids[1]);
                held[r] = ::kill(static_cast<pid_t>(run.pids.first()), SIGSTOP) == 0;
            }
            return (held[0] || runs[0].launch.process.state() == QProcess::NotRunning) &&
                   (held[1] || runs[1].launch.process.state() == QProcess::NotRunning);
        }, kRunTimeoutMs);
        for (const Run& run : runs) {
            QVERIFY2(bothHeld && run.launch.process.state() == QProcess::Running,
                     qPrintable(QStringLiteral("a run ended, or was not seen set up, before its rank 0 was held: ") + run.launch.output));
        }
        QVERIFY(held[0] && held[1]);
        auto each = [&](int r, const char* what) {
            QStringList values;
            for (const qint64 pid : runs[r].pids) {
                values << (qstrcmp(what, "shm") == 0 ? sharedMemorySegmentOf(pid) : environmentOf(pid, QLatin1String(what)));
            }
            return values;
        };
        for (const char* what : {"MASTER_PORT", "RINGMASTER_SOCKET", "RINGMASTER_RUN_DIR", "shm"}) {
            const QStringList a = each(0, what);
            const QStringList b = each(1, what);
            // Shared by a run's two ranks, and not by the other run.
            QVERIFY2(a.size() == 2 && !a.at(0).isEmpty() && a.at(0) == a.at(1), qPrintable(QLatin1String(what) + QLatin1Char(' ') + a.join(QLatin1Char(' '))));
            QVERIFY2(b.size() == 2 && !b.at(0).isEmpty() && b.at(0) == b.at(1), qPrintable(QLatin1String(what) + QLatin1Char(' ') + b.join(QLatin1Char(' '))));
            QVERIFY2(a.at(0) != b.at(0), qPrintable(QLatin1String(what) + QStringLiteral(": both runs use ") + a.at(0)));
        }
        QCOMPARE(each(0, "RINGMASTER_RUN_DIR").at(0), runs[0].dir);
        QCOMPARE(each(1, "RINGMASTER_RUN_DIR").at(0), runs[1].dir);
        QVERIFY(runs[0].dir != runs[1].dir);
        for (const Run& run : runs) QCOMPARE(::kill(static_cast<pid_t>(run.pids.first()), SIGCONT), 0);

        for (Run& run : runs) {
            QVERIFY2(run.launch.finish(kRunTimeoutMs), qPrintable(run.launch.output));
            QCOMPARE(run.launch.process.exitCode(), 0);
            for (const qint64 pid : run.pids) QVERIFY(processGone(pid));
            // Its own steps, once each, at its own learning rate: in the trainer's metrics.csv, in what the
            // supervisor received over its socket and recorded (scalars.csv, summary.json).
            QCOMPARE(csvSteps(run.dir + QStringLiteral("/metrics.csv")), oneTo(run.steps));
            for (const QString& lr : csvColumn(run.dir + QStringLiteral("/metrics.csv"), 3)) QCOMPARE(lr, run.lr);
            const QJsonObject summary = readJson(run.dir + QStringLiteral("/summary.json"));
            QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
            QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), run.steps);
            QCOMPARE(summary.value(QStringLiteral("metrics_received_over_socket")).toInt(), run.steps);
            const QStringList names = csvColumn(run.dir + QStringLiteral("/scalars.csv"), 2);
            const QStringList values = csvColumn(run.dir + QStringLiteral("/scalars.csv"), 3);
            QList<qint64> lossSteps;
            const QStringList scalarSteps = csvColumn(run.dir + QStringLiteral("/scalars.csv"), 0);
            for (int i = 0; i < names.size(); ++i) {
                if (names.at(i) == QLatin1String("loss")) lossSteps.append(scalarSteps.at(i).toLongLong());
                if (names.at(i) == QLatin1String("lr")) QCOMPARE(values.at(i).toDouble(), run.lr.toDouble());
            }
            QCOMPARE(lossSteps, oneTo(run.steps));
            QCOMPARE(tempFilesUnder(run.dir), QStringList());
        }
        QCOMPARE(ringmasterProcesses(root.path()), QList<qint64>());
    }
};

QTEST_GUILESS_MAIN(TestFaultMatrix)
#include "tst_fault_matrix.moc"
