// StackDumps (core/supervisor/stack_dumps.h) against real processes and a real gdb: a running child's threads'
// stacks land in its file and the summary counts them; a pid that is gone gets one line saying gdb could not
// attach; with no gdb on PATH every target gets "gdb is not installed", and finished() still comes once. A Python
// rank with Ringmaster's start-up hook writes its own stacks on the signal; a process that does not catch it is
// never sent it; an NCCL rank's flight recorder is asked through its pipe (a stand-in reader plays PyTorch's part).

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QSocketNotifier>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fcntl.h>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "supervisor/rank_command.h"
#include "supervisor/script_environment.h"
#include "supervisor/stack_dumps.h"

using namespace ringmaster::supervisor;

namespace {

QString readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// Runs the dumps of targets with an empty PATH (no gdb, no py-spy: only what the ranks write themselves).
QStringList dumpWithoutTools(const QString& emptyDir, const QList<StackDumps::Target>& targets)
{
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", emptyDir.toUtf8());
    StackDumps dumps;
    QSignalSpy finished(&dumps, &StackDumps::finished);
    dumps.start(targets);
    const bool came = finished.wait(StackDumps::kNcclTraceWaitMs + 10000);
    qputenv("PATH", path);
    return came ? finished.at(0).at(0).toStringList() : QStringList{QStringLiteral("finished() never came")};
}

} // namespace

class TestStackDumps : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void runningProcessAndVanishedPid()
    {
        if (StackDumps::debugger().isEmpty()) QSKIP("gdb is not installed (scripts/setup.sh installs it)");
        QTemporaryDir dir;
        QProcess sleeper;
        sleeper.start(QStringLiteral("sleep"), {QStringLiteral("60")});
        QVERIFY(sleeper.waitForStarted());
        QProcess gone;
        gone.start(QStringLiteral("true"), {});
        QVERIFY(gone.waitForFinished());
        StackDumps dumps;
        QSignalSpy finished(&dumps, &StackDumps::finished);
        dumps.start({{0, sleeper.processId(), dir.filePath(QStringLiteral("rank-0.stacks.txt")), QString()},
                     {1, gone.processId(), dir.filePath(QStringLiteral("rank-1.stacks.txt")), QString()}});
        QVERIFY(finished.wait(StackDumps::kTimeoutMs + 5000));
        const QStringList summary = finished.at(0).at(0).toStringList();
        QCOMPARE(summary.size(), 2);
        QVERIFY2(summary.at(0).startsWith(QStringLiteral("rank 0: 1 thread(s)' stacks in ")), qPrintable(summary.at(0)));
        const QString stacks = readAll(dir.filePath(QStringLiteral("rank-0.stacks.txt")));
        QVERIFY2(stacks.contains(QStringLiteral("Thread 1 ")) && stacks.contains(QStringLiteral("#0 ")), qPrintable(stacks));
        QVERIFY2(summary.at(1).startsWith(QStringLiteral("rank 1: no stacks (gdb: ")), qPrintable(summary.at(1)));
        QVERIFY(readAll(dir.filePath(QStringLiteral("rank-1.stacks.txt"))).contains(QStringLiteral("ringmaster: gdb: ")));
        // gdb detached: the process runs on, as it was.
        QCOMPARE(sleeper.state(), QProcess::Running);
        sleeper.kill();
        sleeper.waitForFinished();
        QCOMPARE(finished.size(), 1);
        // A second dump (a later attempt's hang) adds its section: the first stays.
        StackDumps again;
        QSignalSpy againFinished(&again, &StackDumps::finished);
        again.start({{1, gone.processId(), dir.filePath(QStringLiteral("rank-0.stacks.txt")), QString()}});
        QVERIFY(againFinished.wait(StackDumps::kTimeoutMs + 5000));
        const QString both = readAll(dir.filePath(QStringLiteral("rank-0.stacks.txt")));
        QCOMPARE(both.count(QStringLiteral("==== ")), 2);
        QVERIFY(both.startsWith(stacks));
    }

    // A rank on another node (a Slurm task): gdb runs through the target's prefix, which for Slurm is srun onto
    // that node (slurm_client.h); here a shell that notes what it was asked to run, then runs it.
    void gdbRunsThroughTheTargetsPrefix()
    {
        if (StackDumps::debugger().isEmpty()) QSKIP("gdb is not installed (scripts/setup.sh installs it)");
        QTemporaryDir dir;
        QProcess sleeper;
        sleeper.start(QStringLiteral("sleep"), {QStringLiteral("60")});
        QVERIFY(sleeper.waitForStarted());
        const QString noted = dir.filePath(QStringLiteral("asked.txt"));
        StackDumps::Target target{0, sleeper.processId(), dir.filePath(QStringLiteral("rank-0.stacks.txt")), QString()};
        target.via = {QStringLiteral("/bin/sh"), QStringLiteral("-c"), QStringLiteral("printf '%s\\n' \"$*\" > \"$0\"; exec \"$@\""), noted};
        StackDumps dumps;
        QSignalSpy finished(&dumps, &StackDumps::finished);
        dumps.start({target});
        QVERIFY(finished.wait(StackDumps::kTimeoutMs + 5000));
        const QStringList summary = finished.at(0).at(0).toStringList();
        QVERIFY2(summary.value(0).startsWith(QStringLiteral("rank 0: 1 thread(s)' stacks in ")), qPrintable(summary.join(QLatin1Char('\n'))));
        QCOMPARE(readAll(noted).trimmed(), QStringLiteral("gdb -batch -nx -p %1 -ex thread apply all bt").arg(sleeper.processId()));
        QVERIFY(readAll(target.path).contains(QStringLiteral("Thread 1 ")));
        sleeper.kill();
        sleeper.waitForFinished();
    }

    // More targets than kMaxConcurrent: every one is dumped, a few at a time, and finished() comes once.
    void manyTargetsAFewAtATime()
    {
        if (StackDumps::debugger().isEmpty()) QSKIP("gdb is not installed (scripts/setup.sh installs it)");
        QTemporaryDir dir;
        std::vector<std::unique_ptr<QProcess>> sleepers;
        QList<StackDumps::Target> targets;
        for (int rank = 0; rank < StackDumps::kMaxConcurrent + 2; ++rank) {
            sleepers.push_back(std::make_unique<QProcess>());
            sleepers.back()->start(QStringLiteral("sleep"), {QStringLiteral("60")});
            QVERIFY(sleepers.back()->waitForStarted());
            targets.append({rank, sleepers.back()->processId(), dir.filePath(QStringLiteral("rank-%1.stacks.txt").arg(rank)), QString()});
        }
        StackDumps dumps;
        QSignalSpy finished(&dumps, &StackDumps::finished);
        dumps.start(targets);
        QVERIFY(finished.wait(4 * StackDumps::kTimeoutMs));
        const QStringList summary = finished.at(0).at(0).toStringList();
        QCOMPARE(summary.size(), static_cast<int>(targets.size()));
        for (int rank = 0; rank < static_cast<int>(targets.size()); ++rank) {
            QVERIFY2(summary.at(rank).startsWith(QStringLiteral("rank %1: 1 thread(s)' stacks in ").arg(rank)), qPrintable(summary.at(rank)));
        }
        for (auto& sleeper : sleepers) sleeper->kill();
        for (auto& sleeper : sleepers) sleeper->waitForFinished();
        QTest::qWait(100);
        QCOMPARE(finished.size(), 1);
    }

    void withoutGdbEveryTargetSaysSo()
    {
        QTemporaryDir dir;
        const QByteArray path = qgetenv("PATH");
        qputenv("PATH", dir.path().toUtf8()); // an empty folder: no gdb
        StackDumps dumps;
        QSignalSpy finished(&dumps, &StackDumps::finished);
        dumps.start({{3, 1, dir.filePath(QStringLiteral("rank-3.stacks.txt")), QString()}});
        const bool came = finished.wait(5000);
        qputenv("PATH", path);
        QVERIFY(came);
        QCOMPARE(finished.at(0).at(0).toStringList(), QStringList{QStringLiteral("rank 3: no stacks (gdb is not installed: apt install gdb)")});
        const QString text = readAll(dir.filePath(QStringLiteral("rank-3.stacks.txt")));
        QVERIFY2(text.startsWith(QStringLiteral("==== ")) && text.contains(QStringLiteral(": every thread's stack of rank 3 (pid 1)")) &&
                     text.endsWith(QStringLiteral("\nringmaster: gdb is not installed: apt install gdb\n")),
                 qPrintable(text));
    }

    // A tool that does not end by the timeout is killed, what it wrote kept, and the summary says so.
    void aToolPastItsTimeoutIsKilledAndItsOutputKept()
    {
        QTemporaryDir dir;
        const QString fake = dir.filePath(QStringLiteral("gdb"));
        QFile script(fake);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("#!/bin/sh\necho 'Thread 1 (Thread 0x1 (LWP 7) \"stuck\"):'\necho '#0  0x0 in somewhere ()'\nexec /bin/sleep 60\n");
        script.close();
        QVERIFY(script.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner));
        const QByteArray path = qgetenv("PATH");
        qputenv("PATH", dir.path().toUtf8());
        StackDumps dumps;
        QSignalSpy finished(&dumps, &StackDumps::finished);
        QElapsedTimer clock;
        clock.start();
        dumps.start({{0, 1, dir.filePath(QStringLiteral("rank-0.stacks.txt")), QString()}}, 1000);
        const bool came = finished.wait(10000);
        qputenv("PATH", path);
        QVERIFY(came);
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(finished.at(0).at(0).toStringList(),
                 QStringList{QStringLiteral("rank 0: 1 thread(s)' stacks in %1 (gdb took longer than 1 s; what it wrote is kept)")
                                 .arg(dir.filePath(QStringLiteral("rank-0.stacks.txt")))});
        QVERIFY(readAll(dir.filePath(QStringLiteral("rank-0.stacks.txt"))).contains(QStringLiteral("#0  0x0 in somewhere ()")));
    }

    // A script's rank blocked inside C (a lock), started as the launcher starts one: its faulthandler writes every
    // thread's Python stack into the file on the signal, and the rank lives on.
    void pythonRankWritesItsOwnStacksOnTheSignal()
    {
        QTemporaryDir dir;
        const QString stacks = dir.filePath(QStringLiteral("rank-0.stacks.txt"));
        QProcess rank;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), helperModuleDir());
        env.insert(QString::fromLatin1(kStacksFileVariable), stacks);
        env.insert(QString::fromLatin1(kStacksSignalVariable), QString::number(pythonStacksSignal()));
        rank.setProcessEnvironment(env);
        rank.start(QStringLiteral("/usr/bin/python3"),
                   {QStringLiteral("-c"), QStringLiteral("import threading\ndef waiting_in_c(lock):\n    print('ready', flush=True)\n"
                                                         "    lock.acquire()\n"
                                                         "lock = threading.Lock(); lock.acquire(); waiting_in_c(lock)\n")});
        QByteArray output;
        while (!output.contains('\n') && rank.waitForReadyRead(30000)) output += rank.readAllStandardOutput();
        QCOMPARE(output, QByteArray("ready\n"));
        QDir empty(dir.filePath(QStringLiteral("empty")));
        QVERIFY(empty.mkpath(QStringLiteral(".")));
        const QStringList summary = dumpWithoutTools(empty.path(), {{0, rank.processId(), stacks, QString(), pythonStacksSignal()}});
        QCOMPARE(summary, QStringList{QStringLiteral("rank 0: 1 Python thread(s) in %1 (gdb is not installed: apt install gdb)").arg(stacks)});
        const QString text = readAll(stacks);
        QVERIFY2(text.contains(QStringLiteral("ringmaster: the Python stacks (faulthandler, signal %1):\nCurrent thread 0x").arg(pythonStacksSignal())) &&
                     text.contains(QStringLiteral(" in waiting_in_c\n")), // line 3 or 4: printing "ready", or in the lock
                 qPrintable(text));
        QCOMPARE(rank.state(), QProcess::Running);
        rank.kill();
        rank.waitForFinished();
    }

    // A process that does not catch the signal (its Python ran without the hook, or it is no Python) is never sent
    // it: the signal's default action would end it before gdb could look.
    void aRankThatDoesNotCatchTheSignalIsNotSentIt()
    {
        QTemporaryDir dir;
        QProcess sleeper;
        sleeper.start(QStringLiteral("sleep"), {QStringLiteral("60")});
        QVERIFY(sleeper.waitForStarted());
        const QString stacks = dir.filePath(QStringLiteral("rank-1.stacks.txt"));
        QDir empty(dir.filePath(QStringLiteral("empty")));
        QVERIFY(empty.mkpath(QStringLiteral(".")));
        QElapsedTimer clock;
        clock.start();
        const QStringList summary = dumpWithoutTools(empty.path(), {{1, sleeper.processId(), stacks, QString(), pythonStacksSignal()}});
        QCOMPARE(summary, QStringList{QStringLiteral("rank 1: no stacks (gdb is not installed: apt install gdb)")});
        QVERIFY2(clock.elapsed() < StackDumps::kFaulthandlerWaitMs, qPrintable(QString::number(clock.elapsed())));
        QVERIFY(readAll(stacks).contains(QStringLiteral("ringmaster: no faulthandler stacks: the rank does not catch signal %1").arg(pythonStacksSignal())));
        QCOMPARE(sleeper.state(), QProcess::Running);
        sleeper.kill();
        sleeper.waitForFinished();
    }

    // An NCCL rank: the launcher writes to the pipe PyTorch made (STEM<rank>.pipe); the reader here plays PyTorch's
    // monitoring thread and writes the trace, which the summary names. A pipe nobody reads is not waited for.
    void ncclRanksFlightRecorderIsAskedThroughItsPipe()
    {
        QTemporaryDir dir;
        const QString stem = ncclTraceStemOf(dir.path()).replace(QStringLiteral("/logs/"), QStringLiteral("/"));
        const QByteArray pipe = QFile::encodeName(stem + QStringLiteral("2.pipe"));
        QCOMPARE(::mkfifo(pipe.constData(), 0600), 0);
        const int reader = ::open(pipe.constData(), O_RDONLY | O_NONBLOCK | O_CLOEXEC); // not the sleeper's too
        QVERIFY(reader >= 0);
        QByteArray asked;
        QSocketNotifier readable(reader, QSocketNotifier::Read);
        connect(&readable, &QSocketNotifier::activated, this, [&] {
            char buffer[64];
            const ssize_t got = ::read(reader, buffer, sizeof buffer);
            if (got <= 0) return;
            asked.append(buffer, got);
            QFile trace(stem + QStringLiteral("2"));
            if (trace.open(QIODevice::WriteOnly)) trace.write("the last collectives\n");
        });
        const auto closeReader = [&] {
            readable.setEnabled(false);
            ::close(reader);
        };
        QProcess sleeper;
        sleeper.start(QStringLiteral("sleep"), {QStringLiteral("60")});
        QVERIFY(sleeper.waitForStarted());
        QDir empty(dir.filePath(QStringLiteral("empty")));
        QVERIFY(empty.mkpath(QStringLiteral(".")));
        const QString stacks = dir.filePath(QStringLiteral("rank-2.stacks.txt"));
        const QStringList summary = dumpWithoutTools(empty.path(), {{2, sleeper.processId(), stacks, QString(), 0, stem}});
        QVERIFY(!asked.isEmpty());
        QCOMPARE(summary, QStringList{QStringLiteral("rank 2: no stacks; NCCL trace in %1 (gdb is not installed: apt install gdb)")
                                          .arg(stem + QStringLiteral("2"))});
        QVERIFY(readAll(stacks).contains(QStringLiteral("ringmaster: PyTorch's NCCL flight recorder wrote the rank's last collectives to %1")
                                             .arg(stem + QStringLiteral("2"))));
        closeReader();

        // No reader: nothing is asked, nothing waited for.
        QElapsedTimer clock;
        clock.start();
        const QStringList unread = dumpWithoutTools(empty.path(), {{2, sleeper.processId(), stacks, QString(), 0, stem}});
        QCOMPARE(unread, QStringList{QStringLiteral("rank 2: no stacks (gdb is not installed: apt install gdb)")});
        QVERIFY2(clock.elapsed() < StackDumps::kFaulthandlerWaitMs, qPrintable(QString::number(clock.elapsed())));
        sleeper.kill();
        sleeper.waitForFinished();
    }

    void noTargetsFinishAtOnce()
    {
        StackDumps dumps;
        QSignalSpy finished(&dumps, &StackDumps::finished);
        dumps.start({});
        QVERIFY(finished.wait(1000));
        QVERIFY(finished.at(0).at(0).toStringList().isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestStackDumps)
#include "tst_stack_dumps.moc"
