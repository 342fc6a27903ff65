// Run folders are not shared scratch space, and the supervisor keeps its own books (issue 22, items 6 and 7):
// two launches at once never share or delete a run directory; a run folder holding a symbolic link is refused
// before anything is written through it (by the launcher, the trainer and a bundle); the supervisor's appends
// are all or nothing and its logs rotate; a full disk under the supervisor's own files is reported once, leaves
// no half row, and a run whose final status could not be written is listed interrupted, not completed.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>
#include <QtConcurrent>

#include <sys/mount.h>
#include <unistd.h>

#include "supervisor/appending_file.h"
#include "runs/run_bundle.h"
#include "supervisor/run_directory.h"
#include "runs/run_listing.h"
#include "protocol/run_lock.h"
#include "runs/run_files.h"
#include "test_support.h"

using namespace ringmaster;
using namespace ringmaster::supervisor;
using namespace ringmaster::supervisor::test;

namespace {

constexpr int kRunTimeoutMs = 180000;

// A small tmpfs at PATH (root only), unmounted when the guard goes.
struct SmallDisk
{
    QString path;
    bool mounted = false;
    SmallDisk(const QString& where, int megabytes) : path(where)
    {
        QDir().mkpath(path);
        const QByteArray options = QByteArray("size=") + QByteArray::number(megabytes) + "M";
        mounted = ::geteuid() == 0 && ::mount("tmpfs", QFile::encodeName(path).constData(), "tmpfs", 0, options.constData()) == 0;
    }
    ~SmallDisk()
    {
        if (mounted) ::umount2(QFile::encodeName(path).constData(), MNT_DETACH);
    }
};

// Fills DISK up to its last few kilobytes with one file; returns its path.
QString fillDisk(const QString& disk, qint64 leaveBytes)
{
    const QString filler = disk + QStringLiteral("/filler");
    QFile file(filler);
    file.open(QIODevice::WriteOnly);
    const QByteArray block(64 * 1024, 'x');
    while (file.write(block) == block.size() && file.flush()) {}
    file.close();
    file.resize(std::max<qint64>(0, file.size() - leaveBytes));
    return filler;
}

// Two RunDirectory::prepare() of one job at the same moment, on two threads (as two launches would race).
struct RacedLaunches
{
    RunDirectory first;
    RunDirectory second;
    QString firstError;
    QString secondError;
    bool firstTook = false;
    bool secondTook = false;

    explicit RacedLaunches(const JobSpec& job)
    {
        auto a = QtConcurrent::run([&] { return first.prepare(job, 1234, trainerPath(), &firstError, true); });
        auto b = QtConcurrent::run([&] { return second.prepare(job, 1234, trainerPath(), &secondError, true); });
        firstTook = a.result();
        secondTook = b.result();
    }
};

} // namespace

class TestRunFolderSafety : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    // Two launches of the same job in the same second (200 rounds): each gets its own folder, none fails or removes the other's
    // (the old exists()-then-mkpath let both take one name, and the one that lost the lock deleted the folder).
    void concurrentLaunchesNeverShareOrDeleteARun()
    {
        QTemporaryDir root;
        JobSpec job = cpuJob(root.path(), 1);
        for (int round = 0; round < 200; ++round) {
            const RacedLaunches race(job);
            QVERIFY2(race.firstTook, qPrintable(race.firstError));
            QVERIFY2(race.secondTook, qPrintable(race.secondError));
            QVERIFY(race.first.path() != race.second.path());
            QVERIFY(QFileInfo::exists(race.first.jobFile()));
            QVERIFY(QFileInfo::exists(race.second.jobFile()));
        }
        // The same --out twice at once: one takes it, the other is refused and removes nothing.
        job.runDir = root.filePath(QStringLiteral("fixed"));
        for (int round = 0; round < 200; ++round) {
            QDir(job.runDir).removeRecursively();
            const RacedLaunches race(job);
            const QString errors = race.firstError + QLatin1Char('|') + race.secondError;
            QVERIFY2(race.firstTook != race.secondTook, qPrintable(errors));
            QVERIFY2((race.firstTook ? race.secondError : race.firstError).contains(QStringLiteral("is being run right now")), qPrintable(errors));
            QVERIFY(QFileInfo::exists(job.runDir + QStringLiteral("/job.json")));
        }
    }

    // A link planted in a run folder (a bundle or a colleague's folder resumed) is never written through: the
    // launcher, the trainer and a bundle refuse it in one line, and the link's target is untouched.
    void aLinkInARunFolderIsRefused()
    {
        QTemporaryDir root;
        const QString target = root.filePath(QStringLiteral("victim.txt"));
        writeFile(target, "keep me\n");
        // A real run, then the link.
        LaunchProcess run;
        run.start({QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs")),
                   QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--max-steps"), QStringLiteral("4"),
                   QStringLiteral("--checkpoint-every"), QStringLiteral("2"), QStringLiteral("--nproc"), QStringLiteral("1"),
                   QStringLiteral("--eval-batch-size"), QStringLiteral("5000")});
        QVERIFY(run.finish(kRunTimeoutMs));
        QVERIFY2(run.process.exitCode() == 0, qPrintable(run.output));
        const QString runDir = run.runDir();
        QVERIFY(QFile::remove(runDir + QStringLiteral("/summary.json")));
        QVERIFY(QFile::link(target, runDir + QStringLiteral("/summary.json")));

        LaunchProcess resume;
        resume.start({QStringLiteral("--resume"), runDir, QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--max-steps"),
                      QStringLiteral("6")});
        QVERIFY(resume.finish(kRunTimeoutMs));
        QCOMPARE(resume.process.exitCode(), 2);
        QVERIFY2(resume.output.contains(QStringLiteral("%1/summary.json is a symbolic link to %2").arg(runDir, target)), qPrintable(resume.output));
        QCOMPARE(readAll(target), QStringLiteral("keep me\n"));

        // The trainer on its own (torchrun, srun, by hand) refuses it too, before the rendezvous.
        QProcess trainer;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("RANK"), QStringLiteral("0"));
        environment.insert(QStringLiteral("LOCAL_RANK"), QStringLiteral("0"));
        environment.insert(QStringLiteral("WORLD_SIZE"), QStringLiteral("1"));
        environment.insert(QStringLiteral("LOCAL_WORLD_SIZE"), QStringLiteral("1"));
        environment.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
        environment.insert(QStringLiteral("MASTER_PORT"), QStringLiteral("0"));
        trainer.setProcessEnvironment(environment);
        trainer.setProcessChannelMode(QProcess::MergedChannels);
        trainer.start(trainerPath(), {QStringLiteral("--out"), runDir, QStringLiteral("--max-steps"), QStringLiteral("1"), QStringLiteral("--threads"), QStringLiteral("1")});
        QVERIFY(trainer.waitForFinished(60000));
        const QString said = QString::fromUtf8(trainer.readAll());
        QCOMPARE(trainer.exitCode(), 2);
        QVERIFY2(said.contains(QStringLiteral("is a symbolic link")), qPrintable(said));
        QCOMPARE(readAll(target), QStringLiteral("keep me\n"));

        // A bundle would have carried the link's target (anything the user can read) out with the run.
        try {
            runs::writeRunBundle(runDir, root.filePath(QStringLiteral("bundle.tar.gz")), {});
            QFAIL("a run folder holding a link was bundled");
        } catch (const runs::RunsError& e) {
            QVERIFY2(e.message().contains(QStringLiteral("is a symbolic link")), qPrintable(e.message()));
        }
        QVERIFY(!QFileInfo::exists(root.filePath(QStringLiteral("bundle.tar.gz"))));
    }

    // Logs rotate at their limit (the newest lines whole in NAME, the previous ones in NAME.1); an append through a
    // planted link is refused.
    void appendsRotateAndNeverFollowALink()
    {
        QTemporaryDir dir;
        AppendingFile log;
        QVERIFY(log.open(dir.filePath(QStringLiteral("rank-0.log"))));
        log.setRotation(100);
        for (int line = 0; line < 10; ++line) QVERIFY(log.append(QByteArray(30, 'a' + line) + '\n').isEmpty());
        QVERIFY(log.size() <= 100);
        QVERIFY(readAll(dir.filePath(QStringLiteral("rank-0.log"))).endsWith(QString(30, QLatin1Char('a' + 9)) + QLatin1Char('\n')));
        QVERIFY(QFileInfo(dir.filePath(QStringLiteral("rank-0.log.1"))).size() <= 100);
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("rank-0.log.2"))));
        const QString target = writeFile(dir.filePath(QStringLiteral("target")), "x");
        QVERIFY(QFile::link(target, dir.filePath(QStringLiteral("linked.log"))));
        AppendingFile linked;
        QString error;
        QVERIFY(!linked.open(dir.filePath(QStringLiteral("linked.log")), &error));
        QCOMPARE(readAll(target), QStringLiteral("x"));
    }

    // A write the disk cannot take whole leaves nothing of itself (root: a small tmpfs).
    void anAppendIsAllOrNothing()
    {
        QTemporaryDir dir;
        SmallDisk disk(dir.filePath(QStringLiteral("disk")), 1);
        if (!disk.mounted) QSKIP("mounting a small tmpfs needs root");
        AppendingFile file;
        QVERIFY(file.open(disk.path + QStringLiteral("/scalars.csv")));
        QVERIFY(file.append("step,wall_time,name,value\n").isEmpty());
        fillDisk(disk.path, 0);
        const qint64 before = QFileInfo(disk.path + QStringLiteral("/scalars.csv")).size();
        const QString failed = file.append(QByteArray(64 * 1024, '1') + '\n');
        QVERIFY2(failed.contains(QStringLiteral("No space left on device")), qPrintable(failed));
        QCOMPARE(QFileInfo(disk.path + QStringLiteral("/scalars.csv")).size(), before);
    }

    // A full disk under the supervisor's own files: said once (the file and the reason), the run goes on, no half
    // row in scalars.csv, and once there is space again the final status is written.
    void aFullDiskIsSaidOnceAndLeavesNoHalfRow()
    {
        QTemporaryDir dir;
        SmallDisk disk(dir.filePath(QStringLiteral("disk")), 8);
        if (!disk.mounted) QSKIP("mounting a small tmpfs needs root");
        const QString python = QStringLiteral("/usr/bin/python3");
        // Prints metric lines, fills the disk, prints more (they cannot be written), frees it, prints, ends.
        const QString script = writeFile(dir.filePath(QStringLiteral("fill.py")), QStringLiteral(R"(import os, sys
disk = sys.argv[1]
for step in range(20): print(f"step {step} loss={1.0 / (step + 1):.6f}", flush=True)
with open(os.path.join(disk, "filler"), "wb") as filler:
    try:
        while True: filler.write(b"x" * 65536); filler.flush()
    except OSError: pass
for step in range(20, 60): print(f"step {step} loss={1.0 / (step + 1):.6f} " + "y" * 2000, flush=True)
os.remove(os.path.join(disk, "filler"))
for step in range(60, 70): print(f"step {step} loss={1.0 / (step + 1):.6f}", flush=True)
)").toUtf8());
        LaunchProcess launch;
        launch.start({QStringLiteral("--script"), script, QStringLiteral("--python"), python, QStringLiteral("--nproc"), QStringLiteral("1"),
                      QStringLiteral("--output-root"), disk.path + QStringLiteral("/runs"), QStringLiteral("--"), disk.path});
        QVERIFY(launch.finish(kRunTimeoutMs));
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        QCOMPARE(launch.output.count(QStringLiteral("No space left on device")), 1);
        QVERIFY2(launch.output.contains(QStringLiteral("ringmaster-launch: warning: cannot write ")), qPrintable(launch.output));
        const QString runDir = launch.runDir();
        const QStringList rows = readAll(runDir + QStringLiteral("/scalars.csv")).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QVERIFY(rows.size() > 1);
        for (const QString& row : rows) QVERIFY2(row.count(QLatin1Char(',')) == 3, qPrintable(row));
        QVERIFY(rows.last().startsWith(QStringLiteral("69,")));
        QCOMPARE(readJson(runDir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
    }

    // Without space at the end the final status cannot be written: the run lock is never let go while the
    // launcher lives, and afterwards the run is listed interrupted, not as a status it does not have.
    void aRunWithoutItsFinalStatusIsListedInterrupted()
    {
        QTemporaryDir dir;
        SmallDisk disk(dir.filePath(QStringLiteral("disk")), 8);
        if (!disk.mounted) QSKIP("mounting a small tmpfs needs root");
        const QString script = writeFile(dir.filePath(QStringLiteral("fill.py")), QStringLiteral(R"(import os, sys
print("step 1 loss=0.5", flush=True)
with open(os.path.join(sys.argv[1], "filler"), "wb") as filler:
    try:
        while True: filler.write(b"x" * 4096); filler.flush()
    except OSError: pass
)").toUtf8());
        LaunchProcess launch;
        launch.start({QStringLiteral("--script"), script, QStringLiteral("--python"), QStringLiteral("/usr/bin/python3"), QStringLiteral("--nproc"),
                      QStringLiteral("1"), QStringLiteral("--output-root"), disk.path + QStringLiteral("/runs"), QStringLiteral("--"), disk.path});
        QVERIFY(launch.finish(kRunTimeoutMs));
        QVERIFY2(launch.output.contains(QStringLiteral("No space left on device")), qPrintable(launch.output));
        const QString runDir = launch.runDir();
        QVERIFY(!runDir.isEmpty());
        QVERIFY(readJson(runDir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString().isEmpty());
        QCOMPARE(protocol::probeRunLock(QFile::encodeName(runDir).toStdString()), protocol::RunLockState::Free);
        const QList<runs::RunRecord> listed = runs::listRuns({disk.path + QStringLiteral("/runs")});
        QCOMPARE(listed.size(), 1);
        QCOMPARE(listed.first().status, QStringLiteral("interrupted"));
    }
};

QTEST_GUILESS_MAIN(TestRunFolderSafety)
#include "tst_run_folder_safety.moc"
