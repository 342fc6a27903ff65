// ringmaster-launch --script: a torchrun-style Python DDP script (written here, run by /usr/bin/python3
// with its torch, 2 CPU ranks on gloo) runs unchanged and sees torchrun's environment; a rank that
// raises brings the group down and is named with its Python exception; SIGTERM stops the ranks;
// a restart relaunches with TORCHELASTIC_RESTART_COUNT incremented; bad input launches nothing.
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <cmath>
#include <csignal>

#include "protocol/tensorboard_records.h"
#include "test_support.h"

using namespace ringmaster::supervisor::test;

namespace {

constexpr int kRunTimeoutMs = 240000;          // two cold `import torch` on 2 shared cores, then training
constexpr int kTeardownLimitMs = 15000;        // rank 1 raised -> launcher exited
constexpr char kPython[] = "/usr/bin/python3"; // the interpreter with python3-torch

// A script as a torchrun user writes it: init_process_group reads the environment, DDP wraps the model,
// rank 0 prints its loss. It also records what it saw (for the test) in RINGMASTER_RUN_DIR.
constexpr char kTrainScript[] = R"PY(
import argparse, json, os, sys, time
import torch
import torch.distributed as dist
import ringmaster  # on PYTHONPATH under ringmaster-launch
from torch.nn.parallel import DistributedDataParallel as DDP

KEYS = ["RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "GROUP_RANK",
        "ROLE_RANK", "ROLE_WORLD_SIZE", "TORCHELASTIC_RESTART_COUNT", "TORCHELASTIC_MAX_RESTARTS",
        "TORCHELASTIC_RUN_ID", "OMP_NUM_THREADS", "PYTHONUNBUFFERED", "RINGMASTER_RUN_DIR",
        "RINGMASTER_SOCKET", "RINGMASTER_TOKEN", "CUDA_VISIBLE_DEVICES", "TORCHELASTIC_ERROR_FILE",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCHELASTIC_SIGNALS_TO_HANDLE", "ACCELERATE_USE_CPU",
        "RINGMASTER_STACKS_FILE", "RINGMASTER_STACKS_SIGNAL", "TORCH_FR_DUMP_TEMP_FILE"]

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=20)
parser.add_argument("--fail-rank", type=int, default=-1)
parser.add_argument("--fail-step", type=int, default=-1)
parser.add_argument("--fail-first-attempt", action="store_true")
parser.add_argument("--sleep", type=float, default=0.0)
parser.add_argument("--stall-step", type=int, default=-1)
parser.add_argument("--tag", default="")
parser.add_argument("rest", nargs="*")
args = parser.parse_args()

dist.init_process_group("gloo")
rank = int(os.environ["RANK"])
local_rank = int(os.environ["LOCAL_RANK"])
world = int(os.environ["WORLD_SIZE"])
assert dist.get_rank() == rank and dist.get_world_size() == world
attempt = os.environ["TORCHELASTIC_RESTART_COUNT"]
seen = {key: os.environ.get(key) for key in KEYS}
seen["argv"] = sys.argv[1:]
seen["pid"] = os.getpid()
with open(os.path.join(os.environ["RINGMASTER_RUN_DIR"], "env-%d-%s.json" % (rank, attempt)), "w") as f:
    json.dump(seen, f)
print("pid %d joined" % os.getpid())
if args.fail_first_attempt and attempt == "0" and rank == 1:
    raise RuntimeError("first attempt fails")

torch.manual_seed(0)
model = DDP(torch.nn.Linear(10, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
generator = torch.Generator().manual_seed(1000 + rank)
for step in range(args.steps):
    x = torch.randn(16, 10, generator=generator)
    loss = torch.nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if rank == args.fail_rank and step == args.fail_step:
        raise RuntimeError("boom at step %d" % step)
    if rank == 0:
        print("step %d loss %.6f" % (step, loss.item()))
        print("iter %d train/loss=%.6f" % (step, loss.item()))  # the default rules make this a scalar
    ringmaster.log(step, helper_loss=loss.item())  # the helper module: rank 0 sends, the others do nothing
    if step == args.stall_step:
        time.sleep(3600)  # every rank, silently
    time.sleep(args.sleep)
ringmaster.flush(5)
dist.destroy_process_group()
)PY";

// The pids every rank recorded in its env-RANK-ATTEMPT.json.
QList<qint64> scriptPids(const QString& runDir)
{
    QList<qint64> pids;
    for (const auto& name : QDir(runDir).entryList({QStringLiteral("env-*.json")})) {
        pids.append(static_cast<qint64>(readJson(runDir + QLatin1Char('/') + name).value(QStringLiteral("pid")).toDouble()));
    }
    return pids;
}

bool allGone(const QList<qint64>& pids)
{
    return QTest::qWaitFor([&] {
        for (const qint64 pid : pids) {
            if (!processGone(pid)) return false;
        }
        return true;
    }, 10000);
}

} // namespace

class TestLaunchScript : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_scripts;
    QString m_train;

    QStringList scriptArguments(const QString& root, const QStringList& extra = {}) const
    {
        return QStringList{QStringLiteral("--script"), m_train, QStringLiteral("--python"), QString::fromLatin1(kPython),
                           QStringLiteral("--output-root"), root, QStringLiteral("--device"), QStringLiteral("cpu"),
                           QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--grace-period"), QStringLiteral("10")} +
               extra;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(!launchPath().isEmpty());
        QVERIFY2(QFileInfo(QString::fromLatin1(kPython)).isExecutable(), "needs /usr/bin/python3 with python3-torch");
        m_train = writeFile(m_scripts.filePath(QStringLiteral("train.py")), kTrainScript);
        QVERIFY(!m_train.isEmpty());
    }

    void ddpScriptRunsUnchangedWithTorchrunEnvironment()
    {
        QTemporaryDir root;
        LaunchProcess launch;
        // Arguments after -- reach the script untouched, --name=value forms included. No shell is involved:
        // its metacharacters arrive as text and run nothing.
        const QString pwned = root.filePath(QStringLiteral("pwned"));
        const QStringList hostile{QStringLiteral("$(touch %1)").arg(pwned), QStringLiteral("'; touch %1; '").arg(pwned),
                                  QStringLiteral("`touch %1`").arg(pwned), QStringLiteral("*")};
        launch.start(scriptArguments(root.path(), QStringList{QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("20"),
                                                   QStringLiteral("--tag=a b"), QStringLiteral("extra")} + hostile),
                     {}, {QStringLiteral("OMP_NUM_THREADS")});
        QVERIFY(launch.finish(kRunTimeoutMs));
        QVERIFY2(launch.process.exitStatus() == QProcess::NormalExit && launch.process.exitCode() == 0, qPrintable(launch.output));
        const QString dir = launch.runDir();
        QVERIFY2(QFileInfo(dir).fileName().endsWith(QStringLiteral("-train")), qPrintable(dir)); // the script's stem
        QVERIFY2(launch.output.contains(QStringLiteral("(torch 1.13")), qPrintable(launch.output));
        // The last line names the last step and scalars (piped: no live line, plain lines every 2 s).
        QVERIFY2(launch.output.contains(QRegularExpression(QStringLiteral("\ncompleted: step 19, helper_loss [0-9.e-]+, train/loss [0-9.e-]+, 0 restart"))),
                 qPrintable(launch.output));

        // Rank 0's log holds every line it printed, step 0 to 19, each with a finite loss.
        static const QRegularExpression stepLine(QStringLiteral(" out step (\\d+) loss ([0-9.]+)$"), QRegularExpression::MultilineOption);
        QList<int> steps;
        for (auto it = stepLine.globalMatch(readAll(dir + QStringLiteral("/logs/rank-0.log"))); it.hasNext();) {
            const auto match = it.next();
            steps.append(match.captured(1).toInt());
            QVERIFY(match.captured(2).toDouble() >= 0);
        }
        QCOMPARE(steps.size(), 20);
        QCOMPARE(steps.first(), 0);
        QCOMPARE(steps.last(), 19);
        QVERIFY(!readAll(dir + QStringLiteral("/logs/rank-1.log")).contains(QStringLiteral("loss")));

        // The environment each rank saw: torchrun's contract plus Ringmaster's.
        const QString runId = QFileInfo(dir).fileName();
        const int threads = std::max(1, QThread::idealThreadCount() / 2);
        QString masterPort;
        for (int rank = 0; rank < 2; ++rank) {
            const QJsonObject seen = readJson(dir + QStringLiteral("/env-%1-0.json").arg(rank));
            QVERIFY2(!seen.isEmpty(), qPrintable(QStringLiteral("rank %1 wrote no environment dump").arg(rank)));
            const auto is = [&](const char* key, const QString& expected) {
                const QString actual = seen.value(QLatin1String(key)).toString();
                if (actual != expected) qWarning("rank %d %s: %s, expected %s", rank, key, qPrintable(actual), qPrintable(expected));
                return actual == expected;
            };
            QVERIFY(is("RANK", QString::number(rank)));
            QVERIFY(is("LOCAL_RANK", QString::number(rank)));
            QVERIFY(is("WORLD_SIZE", QStringLiteral("2")));
            QVERIFY(is("LOCAL_WORLD_SIZE", QStringLiteral("2")));
            QVERIFY(is("MASTER_ADDR", QStringLiteral("127.0.0.1")));
            QVERIFY(is("GROUP_RANK", QStringLiteral("0")));
            QVERIFY(is("ROLE_RANK", QString::number(rank)));
            QVERIFY(is("ROLE_WORLD_SIZE", QStringLiteral("2")));
            QVERIFY(is("TORCHELASTIC_RESTART_COUNT", QStringLiteral("0")));
            QVERIFY(is("TORCHELASTIC_MAX_RESTARTS", QStringLiteral("0")));
            QVERIFY(is("TORCHELASTIC_RUN_ID", runId));
            QVERIFY(is("OMP_NUM_THREADS", QString::number(threads)));
            QVERIFY(is("PYTHONUNBUFFERED", QStringLiteral("1")));
            QVERIFY(is("RINGMASTER_RUN_DIR", dir));
            QVERIFY(is("TORCHELASTIC_ERROR_FILE", dir + QStringLiteral("/logs/error-rank-%1.json").arg(rank)));
            QVERIFY(is("TORCH_NCCL_ASYNC_ERROR_HANDLING", QStringLiteral("1")));
            QVERIFY(is("TORCHELASTIC_SIGNALS_TO_HANDLE", QStringLiteral("SIGTERM,SIGINT,SIGHUP,SIGQUIT")));
            QVERIFY(is("ACCELERATE_USE_CPU", QStringLiteral("true")));
            QVERIFY(is("RINGMASTER_STACKS_FILE", dir + QStringLiteral("/logs/rank-%1.stacks.txt").arg(rank)));
            QVERIFY(is("RINGMASTER_STACKS_SIGNAL", QString::number(SIGRTMIN + 2)));
            QVERIFY(seen.value(QStringLiteral("CUDA_VISIBLE_DEVICES")).isNull()); // a CPU run sets none
            QVERIFY(seen.value(QStringLiteral("TORCH_FR_DUMP_TEMP_FILE")).isNull()); // nor NCCL's flight recorder
            QVERIFY(!seen.value(QStringLiteral("RINGMASTER_SOCKET")).toString().isEmpty());
            QVERIFY(seen.value(QStringLiteral("RINGMASTER_TOKEN")).toString().size() >= 16);
            const int port = seen.value(QStringLiteral("MASTER_PORT")).toString().toInt();
            QVERIFY(port > 0 && port < 65536);
            if (rank == 0) masterPort = seen.value(QStringLiteral("MASTER_PORT")).toString();
            QVERIFY(is("MASTER_PORT", masterPort));
            QCOMPARE(seen.value(QStringLiteral("argv")).toArray().toVariantList(),
                     (QVariantList{QStringLiteral("--steps"), QStringLiteral("20"), QStringLiteral("--tag=a b"), QStringLiteral("extra"),
                                   hostile.at(0), hostile.at(1), hostile.at(2), hostile.at(3)}));
            QVERIFY(!QFileInfo::exists(pwned));
        }

        // scalars.csv: every printed "train/loss" (default rules on rank 0's output) and every value the
        // helper module sent over the socket, each at its step, equal to what rank 0 printed.
        QMap<QString, QMap<int, double>> recorded;
        const QStringList rows = readAll(dir + QStringLiteral("/scalars.csv")).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY(!rows.isEmpty());
        QCOMPARE(rows.first(), QStringLiteral("step,wall_time,name,value"));
        for (const QString& row : rows.mid(1)) {
            const QStringList cells = row.split(QLatin1Char(','));
            QCOMPARE(cells.size(), 4);
            recorded[cells[2]][cells[0].toInt()] = cells[3].toDouble();
        }
        QMap<int, double> printed;
        for (auto it = stepLine.globalMatch(readAll(dir + QStringLiteral("/logs/rank-0.log"))); it.hasNext();) {
            const auto match = it.next();
            printed[match.captured(1).toInt()] = match.captured(2).toDouble();
        }
        QCOMPARE(recorded.value(QStringLiteral("train/loss")).keys(), printed.keys());
        QCOMPARE(recorded.value(QStringLiteral("helper_loss")).keys(), printed.keys());
        for (auto it = printed.cbegin(); it != printed.cend(); ++it) {
            QCOMPARE(recorded[QStringLiteral("train/loss")][it.key()], it.value());
            QVERIFY(std::abs(recorded[QStringLiteral("helper_loss")][it.key()] - it.value()) <= 5e-7);
        }

        // The supervisor's summary (a script writes none) and the resolved job.
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(summary.value(QStringLiteral("restarts")).toInt(), 0);
        QVERIFY(summary.value(QStringLiteral("seconds")).toDouble() > 0);
        const QJsonObject launchSection = readJson(dir + QStringLiteral("/job.json")).value(QStringLiteral("launch")).toObject();
        QCOMPARE(launchSection.value(QStringLiteral("script")).toString(), m_train);
        QCOMPARE(launchSection.value(QStringLiteral("python")).toString(), QString::fromLatin1(kPython));
        QCOMPARE(launchSection.value(QStringLiteral("script_args")).toArray().size(), 4 + hostile.size());
        QVERIFY(allGone(scriptPids(dir)));
    }

    void failingRankIsNamedWithItsPythonError()
    {
        QTemporaryDir root;
        QTemporaryDir notified;
        LaunchProcess launch;
        launch.start(scriptArguments(root.path(), notifyArguments(notified.path()) +
                                                      QStringList{QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("100000"),
                                                                  QStringLiteral("--fail-rank"), QStringLiteral("1"), QStringLiteral("--fail-step"),
                                                                  QStringLiteral("5")}));
        // From the moment rank 1 has raised, the launcher must be done within seconds.
        QString dir;
        QVERIFY2(QTest::qWaitFor([&] {
            launch.read();
            dir = launch.runDir();
            return !dir.isEmpty() && readAll(dir + QStringLiteral("/logs/rank-1.log")).contains(QStringLiteral("boom at step 5"));
        }, kRunTimeoutMs), qPrintable(launch.output));
        QElapsedTimer sinceRaise;
        sinceRaise.start();
        QVERIFY(launch.finish(kTeardownLimitMs));
        QVERIFY2(sinceRaise.elapsed() < kTeardownLimitMs, qPrintable(launch.output));
        QCOMPARE(launch.process.exitCode(), 1);
        QVERIFY2(launch.output.contains(QStringLiteral("FAILED: rank 1 exited with code 1")), qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("  | RuntimeError: boom at step 5")), qPrintable(launch.output));
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(summary.value(QStringLiteral("root_cause_rank")).toInt(), 1);
        QVERIFY(summary.value(QStringLiteral("root_cause_last_lines")).toArray().contains(QStringLiteral("RuntimeError: boom at step 5")));
        const QList<qint64> pids = scriptPids(dir);
        QCOMPARE(pids.size(), 2);
        QVERIFY2(allGone(pids), "a python rank of the failed run is still alive");
        const QList<QJsonObject> events = notifiedEvents(notified.path());
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("failed"));
        QCOMPARE(events.at(0).value(QStringLiteral("rank")).toInt(-1), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("message")).toString(), QStringLiteral("rank 1 exited with code 1"));
        QCOMPARE(events.at(0).value(QStringLiteral("summary")).toObject().value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
    }

    void sigtermStopsTheScriptRanks()
    {
        QTemporaryDir root;
        LaunchProcess launch;
        launch.start(scriptArguments(root.path(), {QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("100000"),
                                                   QStringLiteral("--sleep"), QStringLiteral("0.05")}));
        QString dir;
        QVERIFY2(QTest::qWaitFor([&] {
            launch.read();
            dir = launch.runDir();
            return !dir.isEmpty() && readAll(dir + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("out step 3 loss"));
        }, kRunTimeoutMs), qPrintable(launch.output));
        const QList<qint64> pids = scriptPids(dir);
        QCOMPARE(pids.size(), 2);
        for (const qint64 pid : pids) QVERIFY(!processGone(pid));
        ::kill(static_cast<pid_t>(launch.process.processId()), SIGTERM);
        QVERIFY(launch.finish(30000));
        QCOMPARE(launch.process.exitCode(), 3);
        QCOMPARE(readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        QVERIFY2(allGone(pids), "a python rank outlived the stop");
    }

    void gpuRanksAreSampledAndTheLineShowsTheirUtilisation()
    {
        // The fake NVML's GPUs 1 and 2 (97% and 0% busy, 110 W and 120 W); the script itself computes on the CPU.
        const QString fake = qEnvironmentVariable("RINGMASTER_FAKE_NVML");
        if (fake.isEmpty()) QSKIP("RINGMASTER_FAKE_NVML is not set (ctest sets it)");
        QTemporaryDir root;
        LaunchProcess launch;
        QStringList arguments = scriptArguments(root.path(), {QStringLiteral("--gpus"), QStringLiteral("1,2"), QStringLiteral("--"),
                                                              QStringLiteral("--steps"), QStringLiteral("100000"), QStringLiteral("--sleep"),
                                                              QStringLiteral("0.05")});
        arguments.removeAt(arguments.indexOf(QStringLiteral("--nproc")) + 1);
        arguments.removeOne(QStringLiteral("--nproc"));
        arguments.removeAt(arguments.indexOf(QStringLiteral("--device")) + 1);
        arguments.removeOne(QStringLiteral("--device"));
        launch.start(arguments, {QStringLiteral("RINGMASTER_NVML_LIBRARY=") + fake});
        QVERIFY2(launch.waitForOutput(QStringLiteral("  GPU util 0-97%"), kRunTimeoutMs), qPrintable(launch.output));
        const QString dir = launch.runDir();
        ::kill(static_cast<pid_t>(launch.process.processId()), SIGTERM);
        QVERIFY(launch.finish(30000));
        QCOMPARE(launch.process.exitCode(), 3);
        const QString system = readAll(dir + QStringLiteral("/system.csv"));
        QVERIFY2(system.contains(QStringLiteral(",0,gpu_power_w,110\n")) && system.contains(QStringLiteral(",1,gpu_power_w,120\n")) &&
                     system.contains(QStringLiteral(",0,gpu_util_percent,97\n")) && system.contains(QStringLiteral(",1,gpu_sm_clock_mhz,1390\n")),
                 qPrintable(system.left(2000)));
        // The same samples for TensorBoard, in a folder of their own; the script's own TensorBoard files are
        // followed in the run directory, but never the launcher's: no system value becomes a script scalar.
        const QStringList events = QDir(dir + QStringLiteral("/tb/system")).entryList({QStringLiteral("events.out.tfevents.*")}, QDir::Files);
        QCOMPARE(events.size(), 1);
        QFile eventFile(dir + QStringLiteral("/tb/system/") + events.first());
        QVERIFY(eventFile.open(QIODevice::ReadOnly));
        const QByteArray bytes = eventFile.readAll();
        QMap<QString, QList<double>> tags;
        namespace tb = ringmaster::protocol::tensorboard;
        tb::scanEvents(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), [&](const tb::Event& event) {
            for (const auto& scalar : event.scalars) tags[QString::fromStdString(scalar.tag)].append(scalar.value);
        });
        QVERIFY2(tags.value(QStringLiteral("system/rank0/gpu_power_w")).contains(110.0), qPrintable(QStringList(tags.keys()).join(QLatin1Char(' '))));
        QVERIFY(tags.value(QStringLiteral("system/rank1/gpu_sm_clock_mhz")).contains(1390.0));
        QVERIFY(!readAll(dir + QStringLiteral("/scalars.csv")).contains(QStringLiteral("system/")));
    }

    void restartRelaunchesWithTheNextRestartCount()
    {
        QTemporaryDir root;
        QTemporaryDir notified;
        LaunchProcess launch;
        // The user's own OMP_NUM_THREADS is kept.
        launch.start(scriptArguments(root.path(), notifyArguments(notified.path()) +
                                                      QStringList{QStringLiteral("--max-restarts"), QStringLiteral("1"), QStringLiteral("--"),
                                                                  QStringLiteral("--steps"), QStringLiteral("5"), QStringLiteral("--fail-first-attempt")}),
                     {QStringLiteral("OMP_NUM_THREADS=3")});
        QVERIFY(launch.finish(2 * kRunTimeoutMs));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        const QString dir = launch.runDir();
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("restarts")).toInt(), 1);
        for (int rank = 0; rank < 2; ++rank) {
            const QJsonObject second = readJson(dir + QStringLiteral("/env-%1-1.json").arg(rank));
            QCOMPARE(second.value(QStringLiteral("TORCHELASTIC_RESTART_COUNT")).toString(), QStringLiteral("1"));
            QCOMPARE(second.value(QStringLiteral("TORCHELASTIC_MAX_RESTARTS")).toString(), QStringLiteral("1"));
            QCOMPARE(second.value(QStringLiteral("OMP_NUM_THREADS")).toString(), QStringLiteral("3"));
        }
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/env-1-0.json"))); // the first attempt ran, and failed
        QVERIFY(readAll(dir + QStringLiteral("/logs/rank-0.log")).contains(QStringLiteral("out step 4 loss")));
        QVERIFY(allGone(scriptPids(dir)));
        // --notify-command heard the end once (a failure that was restarted is no event), with the summary.
        const QList<QJsonObject> events = notifiedEvents(notified.path());
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("completed"));
        QCOMPARE(events.at(0).value(QStringLiteral("run_dir")).toString(), QFileInfo(dir).absoluteFilePath());
        QCOMPARE(events.at(0).value(QStringLiteral("title")).toString(), QStringLiteral("run %1 completed").arg(QFileInfo(dir).fileName()));
        const QString message = events.at(0).value(QStringLiteral("message")).toString();
        QVERIFY2(message.startsWith(QStringLiteral("step 4: ")) && message.contains(QStringLiteral("train/loss ")) &&
                     message.endsWith(QStringLiteral(", 1 restart(s)")),
                 qPrintable(message));
        QCOMPARE(events.at(0).value(QStringLiteral("summary")).toObject(), summary);
    }

    // Two ranks that die together: the launcher is stopped (SIGSTOP) while both are killed, so both ends are
    // waiting when it goes on. Each launch is concluded once: one restart, then one failure, one final state,
    // one event for --notify-command (the ends arrive queued; the second once concluded the run again).
    void ranksThatDieTogetherEndTheRunOnce()
    {
        QTemporaryDir root;
        QTemporaryDir notified;
        LaunchProcess launch;
        launch.start(scriptArguments(root.path(), notifyArguments(notified.path()) +
                                                      QStringList{QStringLiteral("--max-restarts"), QStringLiteral("1"), QStringLiteral("--"),
                                                                  QStringLiteral("--steps"), QStringLiteral("100000"), QStringLiteral("--sleep"),
                                                                  QStringLiteral("0.05")}));
        for (const QString attempt : {QStringLiteral("0"), QStringLiteral("1")}) {
            QString dir;
            QVERIFY2(QTest::qWaitFor([&] {
                launch.read();
                dir = launch.runDir();
                return !dir.isEmpty() && QFileInfo::exists(dir + QStringLiteral("/env-0-%1.json").arg(attempt)) &&
                       QFileInfo::exists(dir + QStringLiteral("/env-1-%1.json").arg(attempt));
            }, kRunTimeoutMs), qPrintable(launch.output));
            QList<qint64> pids;
            for (int rank = 0; rank < 2; ++rank) {
                pids << static_cast<qint64>(readJson(dir + QStringLiteral("/env-%1-%2.json").arg(rank).arg(attempt)).value(QStringLiteral("pid")).toDouble());
            }
            const auto launcher = static_cast<pid_t>(launch.process.processId());
            QCOMPARE(::kill(launcher, SIGSTOP), 0);
            for (const qint64 pid : pids) ::kill(static_cast<pid_t>(pid), SIGKILL);
            const bool bothDead = allGone(pids); // zombies: the stopped launcher has not reaped them
            QCOMPARE(::kill(launcher, SIGCONT), 0);
            QVERIFY(bothDead);
        }
        QVERIFY(launch.finish(kRunTimeoutMs));
        QCOMPARE(launch.process.exitCode(), 1);
        const QString log = readAll(launch.runDir() + QStringLiteral("/logs/launcher.log"));
        QCOMPARE(log.count(QStringLiteral("restart 1 of 1 after: ")), 1);
        QCOMPARE(log.count(QStringLiteral("started 2 rank(s) in process group")), 2);
        QCOMPARE(log.count(QStringLiteral(" FAILED: ")), 1);
        QCOMPARE(log.count(QStringLiteral("state: failed")), 1);
        QCOMPARE(readJson(launch.runDir() + QStringLiteral("/summary.json")).value(QStringLiteral("restarts")).toInt(), 1);
        const QList<QJsonObject> events = notifiedEvents(notified.path());
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("failed"));
    }

    // Rank 0 exits 0 and rank 1 exits 1 while the launcher is stopped: the run fails (rank 1), and rank 0's last
    // printed values are in summary.json. Concluding on the first end handled said "completed" and lost them.
    void aCleanExitBesideAFailureIsAFailure()
    {
        QTemporaryDir root;
        const QString go = root.filePath(QStringLiteral("go"));
        const QString script = writeFile(root.filePath(QStringLiteral("pair.py")), QStringLiteral(R"PY(
import os, sys, time
rank = os.environ["RANK"]
with open(os.path.join(os.environ["RINGMASTER_RUN_DIR"], "pid-" + rank), "w") as f:
    f.write(str(os.getpid()))
while not os.path.exists(sys.argv[1]):
    time.sleep(0.02)
if rank == "0":
    print("step 9 last=0.5", flush=True)
sys.exit(int(rank))
)PY").toUtf8());
        LaunchProcess launch;
        launch.start({QStringLiteral("--script"), script, QStringLiteral("--python"), QString::fromLatin1(kPython), QStringLiteral("--nproc"),
                      QStringLiteral("2"), QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs")), QStringLiteral("--"), go});
        QString dir;
        QVERIFY2(QTest::qWaitFor([&] {
            launch.read();
            dir = launch.runDir();
            return !dir.isEmpty() && !readAll(dir + QStringLiteral("/pid-0")).isEmpty() && !readAll(dir + QStringLiteral("/pid-1")).isEmpty();
        }, kRunTimeoutMs), qPrintable(launch.output));
        const QList<qint64> pids{readAll(dir + QStringLiteral("/pid-0")).toLongLong(), readAll(dir + QStringLiteral("/pid-1")).toLongLong()};
        const auto launcher = static_cast<pid_t>(launch.process.processId());
        QCOMPARE(::kill(launcher, SIGSTOP), 0);
        const bool written = !writeFile(go, "").isEmpty();
        const bool bothEnded = allGone(pids);
        QCOMPARE(::kill(launcher, SIGCONT), 0);
        QVERIFY(written && bothEnded);
        QVERIFY(launch.finish(kRunTimeoutMs));
        QCOMPARE(launch.process.exitCode(), 1);
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("failed"));
        QCOMPARE(summary.value(QStringLiteral("root_cause_rank")).toInt(-1), 1);
        QCOMPARE(summary.value(QStringLiteral("last_step")).toInt(), 9);
        QCOMPARE(summary.value(QStringLiteral("last_scalars")).toObject().value(QStringLiteral("last")).toDouble(), 0.5);
        QCOMPARE(readAll(dir + QStringLiteral("/logs/launcher.log")).count(QStringLiteral("state: ")), 3); // starting, running, failed
    }

    // What a script starts and leaves behind dies with the run (issue 22, item 8): a "data server" that leaves the
    // run's process group with setsid() and ignores SIGTERM, and a worker in the group that ignores SIGTERM too.
    // Each failed attempt's leftovers die before the restart; a restart waits 1 s, then 2 s (its back-off).
    void leftoversDieWithTheRunAndRestartsBackOff()
    {
        QTemporaryDir root;
        const QString pids = root.filePath(QStringLiteral("leftovers"));
        const QString script = writeFile(root.filePath(QStringLiteral("spawn.py")), QStringLiteral(R"PY(
import os, signal, subprocess, sys, time
code = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3600)\n"
server = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
worker = subprocess.Popen([sys.executable, "-c", code])
with open(sys.argv[1], "a") as f:
    f.write(f"{server.pid} {worker.pid}\n")
time.sleep(0.5)
print("step 1 loss 0.5", flush=True)
sys.exit(int(os.environ["TORCHELASTIC_RESTART_COUNT"]) < 2)  # fails twice, then completes
)PY").toUtf8());
        LaunchProcess launch;
        launch.start({QStringLiteral("--script"), script, QStringLiteral("--python"), QString::fromLatin1(kPython), QStringLiteral("--nproc"),
                      QStringLiteral("1"), QStringLiteral("--output-root"), root.path(), QStringLiteral("--max-restarts"), QStringLiteral("2"),
                      QStringLiteral("--"), pids});
        QVERIFY(launch.finish(kRunTimeoutMs));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        const QStringList attempts = readAll(pids).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(attempts.size(), 3);
        for (const QString& attempt : attempts) {
            for (const QString& pid : attempt.split(QLatin1Char(' '))) QVERIFY2(processGone(pid.toLongLong()), qPrintable(pid));
        }
        const QString log = readAll(launch.runDir() + QStringLiteral("/logs/launcher.log"));
        QVERIFY2(log.contains(QStringLiteral("killed what the ranks left running")), qPrintable(log));
        QVERIFY2(log.contains(QStringLiteral("(relaunching in 1 s)")) && log.contains(QStringLiteral("(relaunching in 2 s)")), qPrintable(log));
        // The attempts began at least 1 s and then 2 s after the failures before them (the launcher log's times).
        QList<QDateTime> relaunches;
        QList<QDateTime> launches;
        for (const QString& line : log.split(QLatin1Char('\n'))) {
            const QDateTime at = QDateTime::fromString(line.section(QLatin1Char(' '), 0, 0), Qt::ISODateWithMs);
            if (line.contains(QStringLiteral("(relaunching in"))) relaunches << at;
            if (line.contains(QStringLiteral("started 1 rank(s) in process group"))) launches << at;
        }
        QCOMPARE(relaunches.size(), 2);
        QVERIFY2(launches.size() == 3, qPrintable(log));
        QVERIFY(relaunches[0].msecsTo(launches[1]) >= 1000);
        QVERIFY(relaunches[1].msecsTo(launches[2]) >= 2000);
    }

    // The run directory deleted while a restart waits out its back-off: the run fails at once, nothing relaunches
    // into the folder that is gone.
    void runDirectoryDeletedDuringABackOffEndsTheRun()
    {
        QTemporaryDir root;
        const QString script = writeFile(root.filePath(QStringLiteral("fail.py")), "import sys\nsys.exit(1)\n");
        LaunchProcess launch;
        launch.start({QStringLiteral("--script"), script, QStringLiteral("--python"), QString::fromLatin1(kPython), QStringLiteral("--nproc"),
                      QStringLiteral("1"), QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs")), QStringLiteral("--max-restarts"),
                      QStringLiteral("5")});
        QVERIFY2(launch.waitForOutput(QStringLiteral("(relaunching in 2 s)"), kRunTimeoutMs), qPrintable(launch.output));
        QElapsedTimer since;
        since.start();
        QVERIFY(QDir(launch.runDir()).removeRecursively());
        QVERIFY(launch.finish(kRunTimeoutMs));
        QCOMPARE(launch.process.exitCode(), 1);
        QVERIFY2(launch.output.contains(QStringLiteral("was deleted while the run was active")), qPrintable(launch.output));
        QVERIFY2(!launch.output.contains(QStringLiteral("restart 3 of 5")), qPrintable(launch.output));
        QVERIFY(!QFileInfo::exists(launch.runDir()));
    }

    void hangDetectionCountsOutputWhenAsked()
    {
        // --heartbeat-timeout 10 (startup, `import torch`, counts too): rank 1 prints nothing for longer
        // than that, but rank 0's lines show that the group progresses, so the run completes.
        {
            QTemporaryDir root;
            LaunchProcess launch;
            launch.start(scriptArguments(root.path(), {QStringLiteral("--heartbeat-timeout"), QStringLiteral("10"), QStringLiteral("--"),
                                                       QStringLiteral("--steps"), QStringLiteral("30"), QStringLiteral("--sleep"),
                                                       QStringLiteral("0.5")}));
            QVERIFY(launch.finish(kRunTimeoutMs));
            QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
            QVERIFY(launch.output.contains(QStringLiteral("hang detection after 10 s without output")));
        }
        // Every rank silent for 10 s: hung, the group is killed, the launcher exits 1. --notify-command hears
        // of the hang, then of the failure, once each; the run is concluded once although both ranks die together.
        QTemporaryDir root;
        QTemporaryDir notified;
        LaunchProcess launch;
        launch.start(scriptArguments(root.path(), notifyArguments(notified.path()) +
                                                      QStringList{QStringLiteral("--heartbeat-timeout"), QStringLiteral("10"), QStringLiteral("--"),
                                                                  QStringLiteral("--steps"), QStringLiteral("100"), QStringLiteral("--stall-step"),
                                                                  QStringLiteral("2")}));
        QVERIFY(launch.finish(kRunTimeoutMs));
        QCOMPARE(launch.process.exitCode(), 1);
        QVERIFY2(launch.output.contains(QStringLiteral("printed nothing for 10 s (hung")), qPrintable(launch.output));
        QVERIFY2(allGone(scriptPids(launch.runDir())), "a hung python rank outlived the bring-down");
        QCOMPARE(launch.output.count(QStringLiteral("\nFAILED: ")), 1);
        QCOMPARE(readAll(launch.runDir() + QStringLiteral("/logs/launcher.log")).count(QStringLiteral(" FAILED: ")), 1);
        const QList<QJsonObject> events = notifiedEvents(notified.path());
        QCOMPARE(events.size(), 2);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("hung"));
        QCOMPARE(events.at(1).value(QStringLiteral("event")).toString(), QStringLiteral("failed"));
        const int hungRank = events.at(0).value(QStringLiteral("rank")).toInt(-1);
        QVERIFY(hungRank == 0 || hungRank == 1);
        QCOMPARE(events.at(1).value(QStringLiteral("rank")).toInt(-1), hungRank);
        QVERIFY2(events.at(0).value(QStringLiteral("message")).toString().startsWith(QStringLiteral("rank %1 printed nothing for 10 s (hung").arg(hungRank)),
                 qPrintable(events.at(0).value(QStringLiteral("message")).toString()));
        QVERIFY(events.at(0).value(QStringLiteral("summary")).isNull()); // the run had not ended yet
    }

    void badInputLaunchesNothing_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("needle");
        const QString fake = writeFile(m_scripts.filePath(QStringLiteral("python-without-torch")),
                                       "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n", true);
        QTest::newRow("missing script") << QStringList{QStringLiteral("--script"), QStringLiteral("/nonexistent/train.py")}
                                        << QStringLiteral("--script /nonexistent/train.py: no such file");
        QTest::newRow("script is a folder") << QStringList{QStringLiteral("--script"), m_scripts.path()}
                                            << QStringLiteral("not a readable file");
        QTest::newRow("interpreter path missing") << QStringList{QStringLiteral("--python"), QStringLiteral("/nonexistent/python3")}
                                                  << QStringLiteral("--python /nonexistent/python3: no such interpreter:");
        QTest::newRow("interpreter not on PATH") << QStringList{QStringLiteral("--python"), QStringLiteral("no-such-python-here")}
                                                 << QStringLiteral("--python no-such-python-here: no such interpreter on PATH");
        QTest::newRow("interpreter without torch")
            << QStringList{QStringLiteral("--python"), fake}
            << QStringLiteral("cannot import torch (ModuleNotFoundError: No module named 'torch')");
        QTest::newRow("trainer flag") << QStringList{QStringLiteral("--lr"), QStringLiteral("0.1")}
                                      << QStringLiteral("--lr is a ringmaster-trainer flag and cannot be used with --script");
        QTest::newRow("pattern not a regular expression")
            << QStringList{QStringLiteral("--metric-pattern"), QStringLiteral("loss=(?<loss>[0-9")}
            << QStringLiteral("--metric-pattern 'loss=(?<loss>[0-9' is not a valid regular expression");
        QTest::newRow("pattern without a named group")
            << QStringList{QStringLiteral("--metric-pattern"), QStringLiteral("loss=([0-9.]+)")}
            << QStringLiteral("has no named group");
        QTest::newRow("none with other patterns")
            << QStringList{QStringLiteral("--metric-pattern"), QStringLiteral("none"), QStringLiteral("--metric-pattern"), QStringLiteral("l=(?<l>\\d)")}
            << QStringLiteral("--metric-pattern none turns metric parsing off and cannot be combined");
        QTest::newRow("tensorboard dir is a file")
            << QStringList{QStringLiteral("--tensorboard-dir"), m_train}
            << QStringLiteral("--tensorboard-dir %1: not a folder").arg(m_train);
        QTest::newRow("script args without a script") << QStringList{QStringLiteral("--script=")} << QStringLiteral("give the script with --script PATH");
    }

    void badInputLaunchesNothing()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, needle);
        QTemporaryDir root;
        LaunchProcess launch;
        // The flags given last win over the defaults of scriptArguments().
        launch.start(scriptArguments(root.path(), arguments + QStringList{QStringLiteral("--"), QStringLiteral("--steps"), QStringLiteral("1")}));
        QVERIFY(launch.finish(120000));
        QCOMPARE(launch.process.exitCode(), 2);
        QVERIFY2(launch.output.contains(needle), qPrintable(launch.output));
        QVERIFY2(launch.output.trimmed().count(QLatin1Char('\n')) == 0, qPrintable(launch.output)); // one line
        QVERIFY2(QDir(root.path()).isEmpty(), "a run directory was created for a job that failed pre-flight");
    }
};

QTEST_GUILESS_MAIN(TestLaunchScript)
#include "tst_launch_script.moc"
