// StackDumps (core/supervisor/stack_dumps.h) against real processes and a real gdb: a running child's threads'
// stacks land in its file and the summary counts them; a pid that is gone gets one line saying gdb could not
// attach; with no gdb on PATH every target gets "gdb is not installed", and finished() still comes once.

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>
#include <vector>

#include "stack_dumps.h"

using namespace ringmaster::supervisor;

namespace {

QString readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
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
