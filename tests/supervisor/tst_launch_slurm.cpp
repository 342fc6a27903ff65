// ringmaster-launch --slurm as a user runs it, on the real one-node Slurm of scripts/slurm-local.sh
// (skipped, with the reason, where it cannot start: not root, no slurm-wlm): the built-in trainer with
// 2 tasks completes with the whole run directory; its metrics arrive live (shown while squeue still
// says RUNNING); SIGTERM to the launcher stops the job with a checkpoint; a user script completes and
// its printed scalars are recorded; a task that fails fails the run and is named with its exception;
// a launcher killed outright leaves the job running and --attach follows it again; a closed terminal
// (SIGHUP) leaves the job to Slurm with the exact --attach command, which follows it again and stops it;
// commands.json records what each task ran and the contract it got (checked against what the tasks saw);
// bad Slurm input launches nothing. After every run the queue is empty.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "slurm_fixtures.h"
#include "test_support.h"

using namespace ringmaster::supervisor;
using ringmaster::supervisor::test::LaunchProcess;
using ringmaster::supervisor::test::csvRows;
using ringmaster::supervisor::test::trainerPath;

namespace {

constexpr int kRunTimeoutMs = 240000; // a queued job, then ranks on 2 shared cores (scripts: import torch)
constexpr char kRealEntry[] = "supervisor.tst_launch_slurm";

// A torchrun-style script: gloo DDP from the environment; rank 0 prints a scalar line each step.
constexpr char kScript[] = R"PY(
import argparse, json, os, sys, time
import torch
import torch.distributed as dist
parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=12)
parser.add_argument("--fail-rank", type=int, default=-1)
args = parser.parse_args()
# What this task got, for comparing with what commands.json records.
names = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK",
         "GROUP_WORLD_SIZE", "ROLE_NAME", "ROLE_RANK", "ROLE_WORLD_SIZE", "TORCHELASTIC_RESTART_COUNT",
         "TORCHELASTIC_MAX_RESTARTS", "TORCHELASTIC_RUN_ID", "RINGMASTER_RUN_DIR", "PYTHONUNBUFFERED", "OMP_NUM_THREADS",
         "PYTHONPATH", "RINGMASTER_SOCKET", "RINGMASTER_ENDPOINT", "RINGMASTER_TOKEN", "TORCHELASTIC_ERROR_FILE",
         "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCHELASTIC_SIGNALS_TO_HANDLE", "ACCELERATE_USE_CPU",
         "RINGMASTER_STACKS_FILE", "RINGMASTER_STACKS_SIGNAL"]
with open(os.path.join(os.environ["RINGMASTER_RUN_DIR"], "seen-%s.json" % os.environ["RANK"]), "w") as f:
    json.dump({"argv": [sys.executable] + sys.argv, "env": {n: os.environ.get(n) for n in names}}, f)
dist.init_process_group("gloo")
rank = dist.get_rank()
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1, args.steps + 1):
    x = torch.ones(8, 4) * step
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if rank == args.fail_rank and step == 3:
        raise RuntimeError("task %d broke at step %d" % (rank, step))
    if rank == 0:
        print("iter %d train/loss=%.6f" % (step, loss.item()), flush=True)
dist.destroy_process_group()
)PY";

QString jobIdIn(const QString& output)
{
    const auto match = QRegularExpression(QStringLiteral("submitted as Slurm job (\\d+)")).match(output);
    return match.hasMatch() ? match.captured(1) : QString();
}

QJsonArray commandRanks(const QString& runDir)
{
    return slurmtest::readJson(runDir + QStringLiteral("/commands.json")).value(QStringLiteral("ranks")).toArray();
}

// The pid of the trainer task of RANK (Slurm's SLURM_PROCID) whose run directory is RUN_DIR, or 0.
qint64 taskPid(const QString& runDir, int rank)
{
    QProcess pgrep;
    pgrep.start(QStringLiteral("pgrep"), {QStringLiteral("-f"), runDir + QStringLiteral("/job.json")});
    pgrep.waitForFinished();
    for (const QByteArray& line : pgrep.readAllStandardOutput().split('\n')) {
        const qint64 pid = line.trimmed().toLongLong();
        QFile comm(QStringLiteral("/proc/%1/comm").arg(pid));
        QFile environ(QStringLiteral("/proc/%1/environ").arg(pid));
        if (pid <= 0 || !comm.open(QIODevice::ReadOnly) || !comm.readAll().startsWith("ringmaster-trai") ||
            !environ.open(QIODevice::ReadOnly)) {
            continue; // srun, a shell of the batch script, or gone
        }
        const QList<QByteArray> variables = environ.readAll().split('\0');
        if (variables.contains("SLURM_PROCID=" + QByteArray::number(rank))) return pid;
    }
    return 0;
}

// Waits until squeue no longer lists the job (COMPLETING clears within Slurm's own epilog).
bool queueEmpties(const QString& jobId)
{
    return slurmtest::pollUntil([&] { return slurmtest::queueLine(jobId).isEmpty(); }, slurmtest::kJobDeadlineMs);
}

} // namespace

class TestLaunchSlurm : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;
    QString m_script;

    QStringList trainerArguments(const QStringList& extra) const
    {
        return QStringList{QStringLiteral("--slurm"), QStringLiteral("--time"), QStringLiteral("10"),
                           QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--output-root"), m_root.path(),
                           QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--nproc"), QStringLiteral("2"),
                           QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--eval-batch-size"), QStringLiteral("5000"),
                           QStringLiteral("--grace-period"), QStringLiteral("20")} +
               extra;
    }

    QStringList scriptArguments(const QStringList& extra) const
    {
        return QStringList{QStringLiteral("--slurm"), QStringLiteral("--time"), QStringLiteral("10"),
                           QStringLiteral("--script"), m_script, QStringLiteral("--python"), QString::fromLatin1(slurmtest::kPython),
                           QStringLiteral("--output-root"), m_root.path(), QStringLiteral("--device"), QStringLiteral("cpu"),
                           QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--grace-period"), QStringLiteral("10")} +
               extra;
    }

private Q_SLOTS:
    // RUN_DIR/system.csv holds each of the 2 ranks' resident memory (more than LibTorch alone maps) and thread count,
    // and only process metrics: what the ranks' heartbeats said of themselves.
    static bool ranksSaidWhatTheyUse(const QString& runDir)
    {
        const QString csv = runDir + QStringLiteral("/system.csv");
        const QStringList ranks = ringmaster::supervisor::test::csvColumn(csv, 1);
        const QStringList names = ringmaster::supervisor::test::csvColumn(csv, 2);
        const QStringList values = ringmaster::supervisor::test::csvColumn(csv, 3);
        const QStringList process{QStringLiteral("cpu_percent"), QStringLiteral("rss_mib"), QStringLiteral("threads"),
                                  QStringLiteral("disk_read_mib_s"), QStringLiteral("disk_write_mib_s")};
        for (const QString& rank : {QStringLiteral("0"), QStringLiteral("1")}) {
            bool memory = false;
            bool threads = false;
            for (int i = 0; i < ranks.size(); ++i) {
                if (ranks.at(i) != rank) continue;
                memory = memory || (names.at(i) == QLatin1String("rss_mib") && values.at(i).toDouble() > 50.0);
                threads = threads || (names.at(i) == QLatin1String("threads") && values.at(i).toDouble() >= 2.0);
            }
            if (!memory || !threads) {
                qWarning("rank %s: no rss_mib > 50 or threads >= 2 in %s:\n%s", qPrintable(rank), qPrintable(csv),
                         qPrintable(slurmtest::readAll(csv).left(3000)));
                return false;
            }
        }
        for (const QString& name : names) {
            if (!process.contains(name)) {
                qWarning("not a process metric in %s: %s", qPrintable(csv), qPrintable(name));
                return false;
            }
        }
        return true;
    }

    void initTestCase()
    {
        QVERIFY(!ringmaster::supervisor::test::launchPath().isEmpty());
        m_script = ringmaster::supervisor::test::writeFile(m_root.filePath(QStringLiteral("train.py")), kScript);
        QVERIFY(!m_script.isEmpty());
    }

    // Bad Slurm input is refused before anything is submitted (no Slurm needed for most of it).
    void badInputSubmitsNothing_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("needle");
        QTest::newRow("nodes 0") << QStringList{QStringLiteral("--slurm"), QStringLiteral("--nodes"), QStringLiteral("0")}
                                 << QStringLiteral("--nodes");
        QTest::newRow("bad time") << QStringList{QStringLiteral("--slurm"), QStringLiteral("--time"), QStringLiteral("soon")}
                                  << QStringLiteral("--time");
        QTest::newRow("slurm flag without --slurm") << QStringList{QStringLiteral("--partition"), QStringLiteral("debug")}
                                                    << QStringLiteral("--slurm");
    }
    void badInputSubmitsNothing()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, needle);
        LaunchProcess launch;
        launch.start(QStringList{QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--output-root"), m_root.filePath(QStringLiteral("bad"))} +
                     arguments);
        QVERIFY(launch.finish(60000));
        QCOMPARE(launch.process.exitCode(), 2);
        const QStringList lines = launch.output.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1);
        QVERIFY2(lines.first().contains(needle), qPrintable(launch.output));
        QVERIFY(!QDir(m_root.filePath(QStringLiteral("bad"))).exists());
    }

    void unknownPartitionSubmitsNothing()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        LaunchProcess launch;
        launch.start(trainerArguments({QStringLiteral("--partition"), QStringLiteral("nosuchpartition"), QStringLiteral("--max-steps"), QStringLiteral("5")}));
        QVERIFY(launch.finish(60000));
        QCOMPARE(launch.process.exitCode(), 2);
        QVERIFY2(launch.output.contains(QStringLiteral("nosuchpartition")) && launch.output.contains(QStringLiteral("debug")),
                 qPrintable(launch.output));
        QVERIFY2(!launch.output.contains(QStringLiteral("submitted")), qPrintable(launch.output));
    }

    void trainerJobCompletes()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        LaunchProcess launch;
        launch.start(trainerArguments({QStringLiteral("--max-steps"), QStringLiteral("30")}));
        QVERIFY2(launch.finish(kRunTimeoutMs), qPrintable(launch.output));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        const QString jobId = jobIdIn(launch.output);
        QVERIFY2(!jobId.isEmpty(), qPrintable(launch.output));
        const QString dir = launch.runDir();
        QVERIFY2(!dir.isEmpty(), qPrintable(launch.output));

        // The readable batch script, the job id in job.json and slurm/job-id, a log per task.
        const QString sbatch = dir + QStringLiteral("/slurm/job.sbatch");
        QVERIFY(QFileInfo(sbatch).isReadable());
        QVERIFY(slurmtest::readAll(sbatch).contains(QStringLiteral("srun ")));
        QCOMPARE(slurmtest::readAll(dir + QStringLiteral("/slurm/job-id")).trimmed(), jobId);
        const QJsonObject job = slurmtest::readJson(dir + QStringLiteral("/job.json"));
        QCOMPARE(job.value(QStringLiteral("launch")).toObject().value(QStringLiteral("slurm")).toObject().value(QStringLiteral("job_id")).toString(),
                 jobId);
        for (int rank = 0; rank < 2; ++rank) QVERIFY(QFileInfo::exists(dir + QStringLiteral("/logs/rank-%1.log").arg(rank)));
        // The run directory of a local run: metrics, evaluation, scalars, checkpoints, model, summary.
        QCOMPARE(csvRows(dir + QStringLiteral("/metrics.csv")), 30);
        QVERIFY(csvRows(dir + QStringLiteral("/eval.csv")) >= 1);
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/model.pt")));
        QVERIFY(!QDir(dir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("*.pt")}).isEmpty());
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(),
                 QStringLiteral("completed"));
        // Every step reached the launcher over this host's socket and was recorded once.
        QVERIFY2(launch.output.contains(QStringLiteral("metrics: live from rank 0 over this host's socket")), qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("30 step metrics received over this host's socket")), qPrintable(launch.output));
        const QStringList scalarSteps = ringmaster::supervisor::test::csvColumn(dir + QStringLiteral("/scalars.csv"), 0);
        QVERIFY(scalarSteps.contains(QStringLiteral("30")));

        // commands.json, as a local run writes it: each task's trainer command and the contract it took from
        // Slurm's variables (the port is the one rank 0 says it derived), the token never written.
        const QJsonObject commands = slurmtest::readJson(dir + QStringLiteral("/commands.json"));
        QCOMPARE(commands.value(QStringLiteral("slurm_job_id")).toString(), jobId);
        const QJsonArray ranks = commands.value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 2);
        const QString port = QString::number(15000 + jobId.toLongLong() % 17000);
        for (int rank = 0; rank < 2; ++rank) {
            const QJsonObject task = ranks.at(rank).toObject();
            QCOMPARE(task.value(QStringLiteral("program")).toString(), trainerPath());
            const QJsonArray arguments = task.value(QStringLiteral("arguments")).toArray();
            QCOMPARE(arguments.at(0).toString(), QStringLiteral("--job"));
            QCOMPARE(arguments.at(1).toString(), dir + QStringLiteral("/job.json"));
            const QJsonObject environment = task.value(QStringLiteral("environment")).toObject();
            QCOMPARE(environment.value(QStringLiteral("RANK")).toString(), QString::number(rank));
            QCOMPARE(environment.value(QStringLiteral("WORLD_SIZE")).toString(), QStringLiteral("2"));
            QCOMPARE(environment.value(QStringLiteral("MASTER_PORT")).toString(), port);
            QCOMPARE(environment.value(QStringLiteral("RINGMASTER_TOKEN")).toString(), QStringLiteral("(secret)"));
            QVERIFY(!environment.value(QStringLiteral("RINGMASTER_SOCKET")).toString().isEmpty());
        }
        QVERIFY2(slurmtest::readAll(dir + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("MASTER_PORT %1 = ").arg(port)),
                 qPrintable(slurmtest::readAll(dir + QStringLiteral("/logs/rank-0.log")).left(3000)));
        // What each task's process used, as its heartbeats said (the launcher reads no node's /proc for Slurm).
        QVERIFY(ranksSaidWhatTheyUse(dir));
        QVERIFY(queueEmpties(jobId));
    }

    // A rank 0 on another node cannot reach this host's socket: "tcp" withholds the socket, so rank 0
    // reports over the TCP endpoint the launcher opened; "files" offers neither, and every step comes
    // from metrics.csv. Each path delivers every step once.
    void metricsOverTcpOrFiles_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("path");
        QTest::newRow("tcp") << QStringLiteral("tcp") << QStringLiteral("metrics: live from rank 0 over TCP from ");
        QTest::newRow("files") << QStringLiteral("files") << QStringLiteral("metrics: from metrics.csv and eval.csv in the run directory");
    }
    void metricsOverTcpOrFiles()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        QFETCH(QString, mode);
        QFETCH(QString, path);
        LaunchProcess launch;
        launch.start(trainerArguments({QStringLiteral("--slurm-metrics"), mode, QStringLiteral("--max-steps"), QStringLiteral("30")}));
        QVERIFY2(launch.finish(kRunTimeoutMs), qPrintable(launch.output));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        QVERIFY2(launch.output.contains(path), qPrintable(launch.output));
        QVERIFY2(!launch.output.contains(QStringLiteral("over this host's socket")), qPrintable(launch.output));
        const QString received = mode == QLatin1String("tcp") ? QStringLiteral("30 step metrics received over TCP from ")
                                                              : QStringLiteral("30 step metrics received from metrics.csv");
        QVERIFY2(launch.output.contains(received), qPrintable(launch.output));
        // Each step's loss recorded once, whichever path brought it.
        const QString scalars = slurmtest::readAll(launch.runDir() + QStringLiteral("/scalars.csv"));
        QCOMPARE(scalars.count(QRegularExpression(QStringLiteral("(^|\n)30,[^,\n]*,loss,"))), 1);
        QCOMPARE(scalars.count(QRegularExpression(QStringLiteral("\n\\d+,[^,\n]*,loss,"))), 30);
        // Over TCP (a node whose /proc the launcher cannot read) each rank says what its process uses: system.csv.
        if (mode == QLatin1String("tcp")) QVERIFY(ranksSaidWhatTheyUse(launch.runDir()));
        QVERIFY(queueEmpties(jobIdIn(launch.output)));
    }

    // The first step is shown while Slurm still runs the job (live, not read afterwards); SIGTERM to the
    // launcher (what Ctrl-C does) stops every task with a final checkpoint.
    void liveMetricsThenStop()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        LaunchProcess launch;
        launch.start(trainerArguments({QStringLiteral("--epochs"), QStringLiteral("200")}));
        QVERIFY2(launch.waitForOutput(QStringLiteral(" samples/s "), kRunTimeoutMs), qPrintable(launch.output));
        const QString jobId = jobIdIn(launch.output);
        slurmtest::JobGuard guard{SlurmClient(), jobId};
        QVERIFY2(slurmtest::queueLine(jobId).endsWith(QStringLiteral("RUNNING")), qPrintable(slurmtest::queueLine(jobId)));

        ::kill(static_cast<pid_t>(launch.process.processId()), SIGTERM);
        QVERIFY2(launch.finish(kRunTimeoutMs), qPrintable(launch.output));
        QVERIFY2(launch.process.exitCode() == 3, qPrintable(launch.output));
        const QString dir = launch.runDir();
        const QJsonObject summary = slurmtest::readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        // The trainer's final checkpoint, written on SIGTERM, at the step it stopped at.
        const QStringList checkpoints = QDir(dir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("*.pt")});
        QVERIFY2(!checkpoints.isEmpty(), qPrintable(launch.output));
        // The tasks ended by themselves on SIGTERM (the job COMPLETED), not cancelled by Slurm.
        QVERIFY2(launch.output.contains(QStringLiteral("run stopped (Slurm job %1 COMPLETED)").arg(jobId)), qPrintable(launch.output));
        QVERIFY(queueEmpties(jobId));
    }

    // A job Slurm requeues (a node failed, a preemption; here `scontrol requeue`) resumes from the run's newest
    // checkpoint: the second start says so, the steps go on from there (metrics.csv holds each step once, to the
    // end), no checkpoint is set aside as abandoned, and the launcher follows it to `completed`.
    void requeuedJobResumesFromItsNewestCheckpoint()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        LaunchProcess launch;
        launch.start(trainerArguments({QStringLiteral("--max-steps"), QStringLiteral("400"), QStringLiteral("--checkpoint-every"),
                                       QStringLiteral("20"), QStringLiteral("--eval-every"), QStringLiteral("0")}));
        QVERIFY2(launch.waitForOutput(QStringLiteral("checkpoint step 40"), kRunTimeoutMs), qPrintable(launch.output));
        const QString jobId = jobIdIn(launch.output);
        slurmtest::JobGuard guard{SlurmClient(), jobId};
        const QString dir = launch.runDir();
        QCOMPARE(QProcess::execute(QStringLiteral("scontrol"), {QStringLiteral("requeue"), jobId}), 0);
        QVERIFY2(launch.finish(kRunTimeoutMs), qPrintable(launch.output));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        const QString batchLog = slurmtest::readAll(dir + QStringLiteral("/slurm/batch-%1.log").arg(jobId));
        QVERIFY2(launch.output.contains(QStringLiteral("resuming from the newest checkpoint")) ||
                     batchLog.contains(QStringLiteral("resuming from the newest checkpoint")),
                 qPrintable(launch.output + batchLog));
        const QList<qint64> steps = ringmaster::supervisor::test::csvSteps(dir + QStringLiteral("/metrics.csv"));
        QCOMPARE(steps.size(), 400);
        QCOMPARE(steps.last(), 400);
        QVERIFY(QDir(dir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("abandoned-*")}, QDir::Dirs).isEmpty());
        QVERIFY(slurmtest::readAll(dir + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("resumed")));
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(),
                 QStringLiteral("completed"));
        QVERIFY(queueEmpties(jobId));
    }

    void scriptJobCompletes()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        LaunchProcess launch;
        launch.start(scriptArguments({QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("12")}));
        QVERIFY2(launch.finish(kRunTimeoutMs), qPrintable(launch.output));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        const QString dir = launch.runDir();
        // Rank 0's printed "train/loss=" lines became scalars, one per step.
        const QStringList names = ringmaster::supervisor::test::csvColumn(dir + QStringLiteral("/scalars.csv"), 2);
        QCOMPARE(names.count(QStringLiteral("train/loss")), 12);
        QVERIFY(slurmtest::readAll(dir + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("iter 12 train/loss=")));
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(),
                 QStringLiteral("completed"));

        // commands.json says what each task ran and the environment it got, as each task saw it: the same
        // program and arguments, and every recorded variable with the value the task found, except
        // MASTER_ADDR (known once Slurm placed the job) and the token, which is never written.
        const QJsonArray ranks = commandRanks(dir);
        QCOMPARE(ranks.size(), 2);
        const QString commandsText = slurmtest::readAll(dir + QStringLiteral("/commands.json"));
        for (int rank = 0; rank < 2; ++rank) {
            const QJsonObject task = ranks.at(rank).toObject();
            const QJsonObject seen = slurmtest::readJson(dir + QStringLiteral("/seen-%1.json").arg(rank));
            QJsonArray command{task.value(QStringLiteral("program"))};
            for (const auto& argument : task.value(QStringLiteral("arguments")).toArray()) command.append(argument);
            QCOMPARE(command, seen.value(QStringLiteral("argv")).toArray());
            const QJsonObject seenEnv = seen.value(QStringLiteral("env")).toObject();
            const QJsonObject environment = task.value(QStringLiteral("environment")).toObject();
            QVERIFY(environment.size() >= 15);
            for (auto it = environment.constBegin(); it != environment.constEnd(); ++it) {
                if (it.key() == QLatin1String("MASTER_ADDR") || it.key() == QLatin1String("RINGMASTER_TOKEN")) continue;
                QVERIFY2(seenEnv.contains(it.key()), qPrintable(it.key()));
                QCOMPARE(it.value().toString(), seenEnv.value(it.key()).toString());
            }
            QCOMPARE(environment.value(QStringLiteral("RINGMASTER_TOKEN")).toString(), QStringLiteral("(secret)"));
            const QString token = seenEnv.value(QStringLiteral("RINGMASTER_TOKEN")).toString();
            QVERIFY(token.size() >= 16);
            QVERIFY(!commandsText.contains(token));
        }
        QVERIFY(queueEmpties(jobIdIn(launch.output)));
    }

    void failingTaskIsNamed()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        QTemporaryDir notified;
        LaunchProcess launch;
        launch.start(scriptArguments(test::notifyArguments(notified.path()) + QStringList{QStringLiteral("--"), QStringLiteral("--fail-rank"), QStringLiteral("1")}));
        QVERIFY2(launch.finish(kRunTimeoutMs), qPrintable(launch.output));
        QVERIFY2(launch.process.exitCode() == 1, qPrintable(launch.output));
        // --notify-command hears of a Slurm run's failure with its job id.
        const QList<QJsonObject> events = test::notifiedEvents(notified.path());
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("failed"));
        QCOMPARE(events.at(0).value(QStringLiteral("job_id")).toString(), jobIdIn(launch.output));
        QCOMPARE(events.at(0).value(QStringLiteral("rank")).toInt(-1), 1);
        QVERIFY2(QRegularExpression(QStringLiteral("FAILED: rank 1 \\S.*")).match(launch.output).hasMatch(), qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("RuntimeError: task 1 broke at step 3")), qPrintable(launch.output));
        const QJsonObject summary = slurmtest::readJson(launch.runDir() + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(summary.value(QStringLiteral("root_cause_rank")).toInt(-1), 1);
        QVERIFY(queueEmpties(jobIdIn(launch.output)));
    }

    // A task that stops (SIGSTOP) while its heartbeats reach the launcher over the socket: after --heartbeat-timeout
    // it is named hung, the `hung` event goes out, the job is cancelled and the run fails with that rank as the cause.
    void aHungTaskIsNamedAndItsJobCancelled()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        QTemporaryDir notified;
        LaunchProcess launch;
        launch.start(trainerArguments(test::notifyArguments(notified.path()) +
                                      QStringList{QStringLiteral("--epochs"), QStringLiteral("200"), QStringLiteral("--heartbeat-timeout"),
                                                  QStringLiteral("4")}));
        QVERIFY2(launch.waitForOutput(QStringLiteral(" samples/s "), kRunTimeoutMs), qPrintable(launch.output));
        const QString jobId = jobIdIn(launch.output);
        slurmtest::JobGuard guard{SlurmClient(), jobId};
        const qint64 pid = taskPid(launch.runDir(), 1);
        QVERIFY2(pid > 0, "rank 1's task is on this node");
        QCOMPARE(::kill(static_cast<pid_t>(pid), SIGSTOP), 0);
        QVERIFY2(launch.finish(kRunTimeoutMs), qPrintable(launch.output));
        QVERIFY2(launch.process.exitCode() == 1, qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("FAILED: rank 1 stopped heartbeating for 4 s (hung; silent ranks: 1)")),
                 qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("cancelling Slurm job %1 (scancel)").arg(jobId)), qPrintable(launch.output));
        // Before the cancel, every rank's threads' stacks, taken on its node by gdb run as one more step of the job
        // (srun --overlap; one node here): the stopped rank and the one waiting for it.
        const QString stacks1 = launch.runDir() + QStringLiteral("/logs/rank-1.stacks.txt");
        QVERIFY2(launch.output.contains(QStringLiteral("its threads' stacks: ") + stacks1), qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("rank 1: ")) &&
                     launch.output.contains(QStringLiteral(" thread(s)' stacks in ") + stacks1),
                 qPrintable(launch.output));
        for (int r = 0; r < 2; ++r) {
            const QString text = slurmtest::readAll(launch.runDir() + QStringLiteral("/logs/rank-%1.stacks.txt").arg(r));
            QVERIFY2(text.contains(QStringLiteral("Thread 1 ")), qPrintable(text.left(2000)));
        }
        QVERIFY2(launch.output.indexOf(QStringLiteral(" thread(s)' stacks in ") + stacks1) <
                     launch.output.indexOf(QStringLiteral("cancelling Slurm job %1 (scancel)").arg(jobId)),
                 qPrintable(launch.output));
        const QList<QJsonObject> events = test::notifiedEvents(notified.path());
        QCOMPARE(events.size(), 2);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("hung"));
        QCOMPARE(events.at(0).value(QStringLiteral("rank")).toInt(-1), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("job_id")).toString(), jobId);
        QCOMPARE(events.at(1).value(QStringLiteral("event")).toString(), QStringLiteral("failed"));
        const QJsonObject summary = slurmtest::readJson(launch.runDir() + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(summary.value(QStringLiteral("root_cause_rank")).toInt(-1), 1);
        QVERIFY(queueEmpties(jobId));
        QVERIFY(slurmtest::pollUntil([&] { return !QFileInfo::exists(QStringLiteral("/proc/%1").arg(pid)); }, slurmtest::kJobDeadlineMs));
    }

    // The launcher dies (SIGKILL: no chance to cancel anything); the job runs on; --attach follows it
    // again, receives its metrics, and stops it.
    void attachAfterLauncherDies()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        LaunchProcess first;
        first.start(trainerArguments({QStringLiteral("--epochs"), QStringLiteral("200")}));
        QVERIFY2(first.waitForOutput(QStringLiteral(" samples/s "), kRunTimeoutMs), qPrintable(first.output));
        const QString jobId = jobIdIn(first.output);
        slurmtest::JobGuard guard{SlurmClient(), jobId};
        const QString dir = first.runDir();
        ::kill(static_cast<pid_t>(first.process.processId()), SIGKILL);
        QVERIFY(first.finish(30000));
        QVERIFY2(slurmtest::queueLine(jobId).endsWith(QStringLiteral("RUNNING")), qPrintable(slurmtest::queueLine(jobId)));

        QTemporaryDir notified;
        LaunchProcess attached;
        attached.start(QStringList{QStringLiteral("--attach"), dir} + test::notifyArguments(notified.path()));
        QVERIFY2(attached.waitForOutput(QStringLiteral("attached to Slurm job ") + jobId, 60000), qPrintable(attached.output));
        QVERIFY2(attached.waitForOutput(QStringLiteral(" samples/s "), kRunTimeoutMs), qPrintable(attached.output));
        ::kill(static_cast<pid_t>(attached.process.processId()), SIGTERM);
        QVERIFY2(attached.finish(kRunTimeoutMs), qPrintable(attached.output));
        QVERIFY2(attached.process.exitCode() == 3, qPrintable(attached.output));
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(),
                 QStringLiteral("stopped"));
        QVERIFY(queueEmpties(jobId));
        // --notify-command with --attach: the followed run's end, with its job id.
        const QList<QJsonObject> events = test::notifiedEvents(notified.path());
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("stopped"));
        QCOMPARE(events.at(0).value(QStringLiteral("job_id")).toString(), jobId);
        QCOMPARE(events.at(0).value(QStringLiteral("run_dir")).toString(), QFileInfo(dir).absoluteFilePath());

        // A run that Slurm has finished cannot be attached to: one line, exit 2.
        LaunchProcess again;
        again.start({QStringLiteral("--attach"), dir});
        QVERIFY(again.finish(60000));
        QCOMPARE(again.process.exitCode(), 2);
        QVERIFY2(again.output.contains(QStringLiteral("has ended")), qPrintable(again.output));
    }

    // The terminal closes (SIGHUP) during a --slurm run: the launcher leaves the job to Slurm, prints one
    // line with the exact command that follows it again, and exits 4. The job runs on with no launcher
    // (its steps keep coming into metrics.csv); that command follows it, and Ctrl-C (SIGINT) stops it.
    void hangupLeavesTheJobRunning()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        LaunchProcess first;
        first.start(trainerArguments({QStringLiteral("--epochs"), QStringLiteral("200")}));
        QVERIFY2(first.waitForOutput(QStringLiteral(" samples/s "), kRunTimeoutMs), qPrintable(first.output));
        const QString jobId = jobIdIn(first.output);
        slurmtest::JobGuard guard{SlurmClient(), jobId};
        const QString dir = first.runDir();
        ::kill(static_cast<pid_t>(first.process.processId()), SIGHUP);
        QVERIFY2(first.finish(60000), qPrintable(first.output));
        QVERIFY2(first.process.exitCode() == 4, qPrintable(first.output));
        static const QRegularExpression leftLine(QStringLiteral("^left running in Slurm job (\\d+) \\(RUNNING\\): follow it again with "
                                                                "(ringmaster-launch --attach (\\S+))$"),
                                                 QRegularExpression::MultilineOption);
        const auto left = leftLine.match(first.output);
        QVERIFY2(left.hasMatch(), qPrintable(first.output));
        QCOMPARE(left.captured(1), jobId);
        QCOMPARE(left.captured(3), dir);
        QCOMPARE(first.output.count(QStringLiteral("left running")), 1);
        QVERIFY2(!first.output.contains(QStringLiteral("stopping")), qPrintable(first.output));
        QVERIFY(slurmtest::readAll(dir + QStringLiteral("/logs/launcher.log")).contains(left.captured(0)));

        // Nothing was cancelled: the job runs, and its steps keep coming without a launcher.
        QVERIFY2(slurmtest::queueLine(jobId).endsWith(QStringLiteral("RUNNING")), qPrintable(slurmtest::queueLine(jobId)));
        const int rows = csvRows(dir + QStringLiteral("/metrics.csv"));
        QVERIFY(slurmtest::pollUntil([&] { return csvRows(dir + QStringLiteral("/metrics.csv")) > rows + 2; }, kRunTimeoutMs));

        // The printed command, as printed, follows it again; Ctrl-C stops it with a final checkpoint.
        const QStringList words = QProcess::splitCommand(left.captured(2));
        QCOMPARE(words.first(), QStringLiteral("ringmaster-launch"));
        LaunchProcess attached;
        attached.start(words.mid(1));
        QVERIFY2(attached.waitForOutput(QStringLiteral("attached to Slurm job ") + jobId, 60000), qPrintable(attached.output));
        QVERIFY2(attached.waitForOutput(QStringLiteral(" samples/s "), kRunTimeoutMs), qPrintable(attached.output));
        ::kill(static_cast<pid_t>(attached.process.processId()), SIGINT);
        QVERIFY2(attached.finish(kRunTimeoutMs), qPrintable(attached.output));
        QVERIFY2(attached.process.exitCode() == 3, qPrintable(attached.output));
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(),
                 QStringLiteral("stopped"));
        QVERIFY(!QDir(dir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("*.pt")}).isEmpty());
        QVERIFY(queueEmpties(jobId));
    }
};

QTEST_GUILESS_MAIN(TestLaunchSlurm)
#include "tst_launch_slurm.moc"
