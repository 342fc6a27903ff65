// The ways a user's script reports scalars beyond the default rules (issue 9): its own --metric-pattern
// (which replaces the default rules; `none` turns reading its output off) and TensorBoard event files that
// it writes, followed live under the run directory or a --tensorboard-dir. The event files are written here
// by an independent Python implementation of the record format (Debian has no tensorboard package).
// Also what the run directory then says: summary.json's last step and last value of each scalar, and
// commands.json, the exact command of each rank without the socket's secret; and --resume RUN_DIR of a
// failed script run, which relaunches the script in the same directory, where it continues from its own state.
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>

#include "supervisor/run_supervisor.h"
#include "test_support.h"

using namespace ringmaster::supervisor;
using namespace ringmaster::supervisor::test;

namespace {

constexpr int kRunTimeoutMs = 180000;          // a cold `import torch` at pre-flight on 2 shared cores
constexpr char kPython[] = "/usr/bin/python3"; // the interpreter with python3-torch (pre-flight imports it)
constexpr int kSteps = 12;

// Standard library only: rank 0 prints one line per step and writes one TensorBoard scalar per step.
// The record format: uint64 length | masked crc32c(length) | data | masked crc32c(data); the Event and
// Summary messages encoded by hand from event.proto and summary.proto.
constexpr char kScript[] = R"PY(
import os, socket, struct, sys, time

def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF

def masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)

def key(field, wire):
    return varint((field << 3) | wire)

def delimited(field, data):
    return key(field, 2) + varint(len(data)) + data

def event(wall_time, step, version=None, tag=None, value=None):
    message = key(1, 1) + struct.pack("<d", wall_time) + key(2, 0) + varint(step)
    if version is not None:
        message += delimited(3, version.encode())
    if tag is not None:
        summary_value = delimited(1, tag.encode()) + key(2, 5) + struct.pack("<f", value)
        message += delimited(5, delimited(1, summary_value))
    return message

def write_record(f, data):
    length = struct.pack("<Q", len(data))
    f.write(length + struct.pack("<I", masked(length)) + data + struct.pack("<I", masked(data)))
    f.flush()

steps, tb_dir = int(sys.argv[1]), sys.argv[2]
if os.environ["RANK"] == "0":
    tb_dir = tb_dir or os.path.join(os.environ["RINGMASTER_RUN_DIR"], "tb-script", "sub")
    os.makedirs(tb_dir, exist_ok=True)
    name = "events.out.tfevents.%d.%s.%d" % (int(time.time()), socket.gethostname(), os.getpid())
    with open(os.path.join(tb_dir, name), "wb") as f:
        write_record(f, event(1700000000.0, 0, version="brain.Event:2"))
        for step in range(steps):
            print("it %d | l %.4f other=5" % (step, 0.5 + step / 16))
            write_record(f, event(1700000000.25 + step, step, tag="train/tb_loss", value=(step + 1) / 8))
            time.sleep(0.05)
)PY";

// Resumes from RUN_DIR/state.txt (the last finished step) as a script does from its own checkpoints; the
// first time, it fails after step 4.
constexpr char kResumableScript[] = R"PY(
import os, sys
run_dir = os.environ["RINGMASTER_RUN_DIR"]
state = os.path.join(run_dir, "state-%s.txt" % os.environ["RANK"])
first = int(open(state).read()) + 1 if os.path.exists(state) else 0
for step in range(first, 10):
    if step == 5 and not os.path.exists(os.path.join(run_dir, "failed-once")):
        open(os.path.join(run_dir, "failed-once"), "w").close()
        raise SystemExit("failing at step 5 the first time")
    if os.environ["RANK"] == "0":
        print("step %d loss=%.3f" % (step, 1.0 / (step + 1)))
    with open(state, "w") as f:
        f.write(str(step))
)PY";

// Waits for "Checkpoint now" through the helper module; saves, then ends.
constexpr char kCheckpointScript[] = R"PY(
import os, time
import ringmaster
print("ready", flush=True)
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    if ringmaster.checkpoint_requested():
        open(os.path.join(os.environ["RINGMASTER_RUN_DIR"], "checkpoint-rank-%s" % os.environ["RANK"]), "w").close()
        break
    time.sleep(0.05)
)PY";

// Prints nothing: its only sign of life is what it sends through the helper module.
constexpr char kSilentReporterScript[] = R"PY(
import os, time
import ringmaster
for step in range(24):
    ringmaster.log(step, loss=1.0 / (step + 1))
    time.sleep(0.5)
ringmaster.flush(5)
)PY";

struct ScalarsCsv
{
    QMap<QString, QMap<qint64, double>> values;      // name -> step -> value
    QMap<QString, QMap<qint64, double>> wallTimes;   // name -> step -> wall_time
};

ScalarsCsv readScalars(const QString& runDir)
{
    ScalarsCsv csv;
    const QStringList rows = readAll(runDir + QStringLiteral("/scalars.csv")).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (const QString& row : rows.mid(1)) {
        const QStringList cells = row.split(QLatin1Char(','));
        if (cells.size() != 4) continue;
        csv.values[cells[2]][cells[0].toLongLong()] = cells[3].toDouble();
        csv.wallTimes[cells[2]][cells[0].toLongLong()] = cells[1].toDouble();
    }
    return csv;
}

} // namespace

class TestLaunchScriptMetrics : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_scripts;
    QString m_script;

    QStringList arguments(const QString& root, const QStringList& extra, const QString& tensorboardDir) const
    {
        return QStringList{QStringLiteral("--script"), m_script, QStringLiteral("--python"), QString::fromLatin1(kPython),
                           QStringLiteral("--output-root"), root, QStringLiteral("--device"), QStringLiteral("cpu"),
                           QStringLiteral("--nproc"), QStringLiteral("2")} +
               extra + QStringList{QStringLiteral("--"), QString::number(kSteps), tensorboardDir};
    }

    // Every TensorBoard scalar arrived with its step, value and the event's own wall time.
    static void verifyTensorBoardScalars(const ScalarsCsv& csv)
    {
        const auto values = csv.values.value(QStringLiteral("train/tb_loss"));
        QCOMPARE(values.size(), kSteps);
        for (qint64 step = 0; step < kSteps; ++step) {
            QCOMPARE(values.value(step, -1.0), static_cast<double>(step + 1) / 8.0);
            QCOMPARE(csv.wallTimes.value(QStringLiteral("train/tb_loss")).value(step, -1.0), 1700000000.25 + static_cast<double>(step));
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(!launchPath().isEmpty());
        QVERIFY2(QFileInfo(QString::fromLatin1(kPython)).isExecutable(), "needs /usr/bin/python3 with python3-torch");
        m_script = writeFile(m_scripts.filePath(QStringLiteral("report.py")), kScript);
        QVERIFY(!m_script.isEmpty());
    }

    void ownPatternAndTensorBoardFolder()
    {
        QTemporaryDir root;
        const QString tensorboard = root.filePath(QStringLiteral("elsewhere/tb"));
        LaunchProcess launch;
        launch.start(arguments(root.path(),
                               {QStringLiteral("--metric-pattern"), QStringLiteral("it (?<step>\\d+) \\| l (?<myloss>[0-9.]+)"),
                                QStringLiteral("--tensorboard-dir"), tensorboard},
                               tensorboard));
        QVERIFY(launch.finish(kRunTimeoutMs));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        const QString dir = launch.runDir();
        const ScalarsCsv csv = readScalars(dir);

        // The pattern's named group is the scalar, its `step` group the step; the default rules are off
        // (they would have read "other=5").
        const auto myloss = csv.values.value(QStringLiteral("myloss"));
        QCOMPARE(myloss.size(), kSteps);
        for (qint64 step = 0; step < kSteps; ++step) QCOMPARE(myloss.value(step, -1.0), 0.5 + static_cast<double>(step) / 16.0);
        QVERIFY2(!csv.values.contains(QStringLiteral("other")), "the default rules ran beside the user's pattern");
        verifyTensorBoardScalars(csv);
        QCOMPARE(csv.values.keys(), (QStringList{QStringLiteral("myloss"), QStringLiteral("train/tb_loss")}));

        // job.json keeps the patterns and the folder; summary.json the last step and values.
        const QJsonObject launchSection = readJson(dir + QStringLiteral("/job.json")).value(QStringLiteral("launch")).toObject();
        QCOMPARE(launchSection.value(QStringLiteral("metric_patterns")).toArray().size(), 1);
        QCOMPARE(launchSection.value(QStringLiteral("tensorboard_dir")).toString(), tensorboard);
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("last_step")).toInt(), kSteps - 1);
        const QJsonObject last = summary.value(QStringLiteral("last_scalars")).toObject();
        QCOMPARE(last.value(QStringLiteral("myloss")).toDouble(), 0.5 + (kSteps - 1) / 16.0);
        QCOMPARE(last.value(QStringLiteral("train/tb_loss")).toDouble(), kSteps / 8.0);

        // commands.json: each rank's exact command and the environment Ringmaster gave it, but no secret.
        const QJsonArray ranks = readJson(dir + QStringLiteral("/commands.json")).value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 2);
        for (int r = 0; r < 2; ++r) {
            const QJsonObject rank = ranks.at(r).toObject();
            QCOMPARE(rank.value(QStringLiteral("rank")).toInt(), r);
            QCOMPARE(rank.value(QStringLiteral("program")).toString(), QString::fromLatin1(kPython));
            QCOMPARE(rank.value(QStringLiteral("arguments")).toArray().first().toString(), m_script);
            const QJsonObject environment = rank.value(QStringLiteral("environment")).toObject();
            QCOMPARE(environment.value(QStringLiteral("RANK")).toString(), QString::number(r));
            QCOMPARE(environment.value(QStringLiteral("WORLD_SIZE")).toString(), QStringLiteral("2"));
            QCOMPARE(environment.value(QStringLiteral("RINGMASTER_TOKEN")).toString(), QStringLiteral("(secret)"));
        }
        QVERIFY(!readAll(dir + QStringLiteral("/commands.json")).contains(QStringLiteral("\"RINGMASTER_TOKEN\": \"\"")));
    }

    void tensorBoardUnderTheRunDirectoryWithOutputReadingOff()
    {
        QTemporaryDir root;
        LaunchProcess launch;
        launch.start(arguments(root.path(), {QStringLiteral("--metric-pattern"), QStringLiteral("none")}, QString()));
        QVERIFY(launch.finish(kRunTimeoutMs));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        const ScalarsCsv csv = readScalars(launch.runDir());
        verifyTensorBoardScalars(csv); // found two folders deep under RUN_DIR
        QCOMPARE(csv.values.keys(), QStringList{QStringLiteral("train/tb_loss")});
    }

    void checkpointNowReachesTheScriptsRankZero()
    {
        // The app's "Checkpoint now": SIGUSR1 to rank 0, which the helper module turns into checkpoint_requested().
        QTemporaryDir root;
        JobSpec job = defaultJob(0);
        job.trainer = QJsonObject();
        job.script = writeFile(m_scripts.filePath(QStringLiteral("checkpoint.py")), kCheckpointScript);
        job.python = QString::fromLatin1(kPython);
        job.outputRoot = root.path();
        job.nproc = 2;
        job.heartbeatTimeoutGiven = false;
        RunSupervisor supervisor;
        QString error;
        QVERIFY2(supervisor.start(job, &error), qPrintable(error));
        const QString log0 = supervisor.runDir() + QStringLiteral("/logs/rank-0.log");
        QVERIFY(QTest::qWaitFor([&] { return readAll(log0).contains(QStringLiteral("ready")); }, kRunTimeoutMs));
        supervisor.requestCheckpoint();
        // Rank 0 saves and ends; rank 1 (no request) keeps waiting until the group is stopped.
        QVERIFY(QTest::qWaitFor([&] { return QFileInfo::exists(supervisor.runDir() + QStringLiteral("/checkpoint-rank-0")); }, 30000));
        QVERIFY(!QFileInfo::exists(supervisor.runDir() + QStringLiteral("/checkpoint-rank-1")));
        supervisor.requestStop();
        QVERIFY(QTest::qWaitFor([&] { return isFinal(supervisor.state()); }, 60000));
    }

    void helperReportsCountAsProgress()
    {
        // --heartbeat-timeout 5 and 12 s without a printed line: the values rank 0 sends keep the run alive.
        QTemporaryDir root;
        const QString script = writeFile(m_scripts.filePath(QStringLiteral("silent.py")), kSilentReporterScript);
        LaunchProcess launch;
        launch.start({QStringLiteral("--script"), script, QStringLiteral("--python"), QString::fromLatin1(kPython),
                      QStringLiteral("--output-root"), root.path(), QStringLiteral("--device"), QStringLiteral("cpu"),
                      QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--heartbeat-timeout"), QStringLiteral("5")});
        QVERIFY(launch.finish(kRunTimeoutMs));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        QCOMPARE(readScalars(launch.runDir()).values.value(QStringLiteral("loss")).size(), 24);
    }

    void resumeOfAFailedScriptRunContinuesInItsDirectory()
    {
        QTemporaryDir root;
        const QString script = writeFile(m_scripts.filePath(QStringLiteral("resumable.py")), kResumableScript);
        const QStringList base{QStringLiteral("--python"), QString::fromLatin1(kPython), QStringLiteral("--device"), QStringLiteral("cpu"),
                               QStringLiteral("--nproc"), QStringLiteral("2")};
        LaunchProcess first;
        first.start(QStringList{QStringLiteral("--script"), script, QStringLiteral("--output-root"), root.path()} + base);
        QVERIFY(first.finish(kRunTimeoutMs));
        QCOMPARE(first.process.exitCode(), 1);
        const QString dir = first.runDir();
        QCOMPARE(readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(), QStringLiteral("failed"));

        LaunchProcess resumed;
        resumed.start(QStringList{QStringLiteral("--resume"), dir} + base);
        QVERIFY(resumed.finish(kRunTimeoutMs));
        QVERIFY2(resumed.process.exitCode() == 0, qPrintable(resumed.output));
        QCOMPARE(resumed.runDir(), dir); // the same directory, with the job.json it had
        QCOMPARE(QDir(root.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), 1);
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("last_step")).toInt(), 9);
        // Every step's loss once: 0-4 from the first launch, 5-9 from the resumed one, appended.
        const auto loss = readScalars(dir).values.value(QStringLiteral("loss"));
        QCOMPARE(loss.keys(), (QList<qint64>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
        for (qint64 step = 0; step < 10; ++step) QCOMPARE(loss.value(step), QString::number(1.0 / static_cast<double>(step + 1), 'f', 3).toDouble());
        QCOMPARE(readAll(dir + QStringLiteral("/scalars.csv")).count(QStringLiteral("step,wall_time,name,value")), 1);
        const QString log = readAll(dir + QStringLiteral("/logs/rank-0.log"));
        QVERIFY(log.contains(QStringLiteral("step 4 loss=")) && log.contains(QStringLiteral("step 9 loss=")));
    }
};

QTEST_GUILESS_MAIN(TestLaunchScriptMetrics)
#include "tst_launch_script_metrics.moc"
