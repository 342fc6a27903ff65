// RankProcess's output handling with real child processes (python3 writing to its stdout): what a rank prints
// without a newline stays bounded in the supervisor. A long line is logged in kMaxLineBytes pieces while it is
// still arriving, and a progress bar redrawn with carriage returns keeps only its last state.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include "supervisor/rank_process.h"

#include <csignal>

using ringmaster::supervisor::RankProcess;

namespace {

constexpr int kPieceBytes = 64 * 1024;   // RankProcess::kMaxLineBytes
constexpr int kWaitMs = 30000;

// Runs PYTHON_CODE as a rank; the returned process logs into DIR/rank-0.log.
std::unique_ptr<RankProcess> startPython(const QTemporaryDir& dir, const QString& code)
{
    auto rank = std::make_unique<RankProcess>(0, dir.filePath(QStringLiteral("rank-0.log")));
    rank->start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), code}, QProcessEnvironment::systemEnvironment(), 0);
    return rank;
}

QStringList loggedLines(const QSignalSpy& spy)
{
    QStringList lines;
    for (const auto& arguments : spy) lines << arguments.at(1).toString();
    return lines;
}

} // namespace

class TestRankProcess : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void longLineIsLoggedInPiecesWhileItArrives()
    {
        QTemporaryDir dir;
        // 1 MiB and 100 bytes of digits without a newline, then the rank waits for a signal.
        const QString code = QStringLiteral(
            "import os, signal, sys\n"
            "data = ''.join(str(i % 10) for i in range(%1))\n"
            "sys.stdout.write(data); sys.stdout.flush()\n"
            "signal.pause()\n").arg(16 * kPieceBytes + 100);
        auto rank = startPython(dir, code);
        QSignalSpy lines(rank.get(), &RankProcess::lineLogged);
        QSignalSpy finished(rank.get(), &RankProcess::finished);
        QVERIFY(rank->pid() > 0);
        // Sixteen whole pieces are logged while the rank is still running (the line has not ended).
        QTRY_VERIFY_WITH_TIMEOUT(lines.size() >= 16, kWaitMs);
        QVERIFY(rank->isRunning());
        QCOMPARE(lines.size(), 16);
        for (const QString& piece : loggedLines(lines)) QCOMPARE(piece.size(), kPieceBytes);

        ::kill(static_cast<pid_t>(rank->pid()), SIGTERM);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kWaitMs);
        // The last 100 bytes come when the rank ends; in order, nothing lost.
        QCOMPARE(lines.size(), 17);
        const QString all = loggedLines(lines).join(QString());
        QCOMPARE(all.size(), 16 * kPieceBytes + 100);
        for (int i = 0; i < all.size(); i += 4099) QCOMPARE(all.at(i), QChar(QLatin1Char(static_cast<char>('0' + i % 10))));
        QFile log(dir.filePath(QStringLiteral("rank-0.log")));
        QVERIFY(log.open(QIODevice::ReadOnly));
        QCOMPARE(log.readAll().count('\n'), 17);
    }

    void progressBarKeepsItsLastState()
    {
        QTemporaryDir dir;
        // 100,000 redraws (700 KB) without a newline, then a last state and a signal wait.
        const QString code = QStringLiteral(
            "import signal, sys\n"
            "for i in range(100000):\n"
            "    sys.stdout.write('\\r%6d' % i)\n"
            "sys.stdout.write('\\r  last'); sys.stdout.flush()\n"
            "signal.pause()\n");
        auto rank = startPython(dir, code);
        QSignalSpy lines(rank.get(), &RankProcess::lineLogged);
        QSignalSpy finished(rank.get(), &RankProcess::finished);
        QVERIFY(rank->pid() > 0);
        // Everything has been read once the last state is held; only that state is, and nothing was logged.
        QTRY_VERIFY_WITH_TIMEOUT(rank->unfinishedOutputLine().endsWith("  last"), kWaitMs);
        QCOMPARE(rank->unfinishedOutputLine(), QByteArray("\r  last"));
        QCOMPARE(lines.size(), 0);
        ::kill(static_cast<pid_t>(rank->pid()), SIGTERM);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kWaitMs);
        QCOMPARE(loggedLines(lines), QStringList{QStringLiteral("  last")});
    }

    void redrawnAndWindowsLinesAreLoggedAsATerminalShowsThem()
    {
        QTemporaryDir dir;
        const QString code = QStringLiteral(
            "import sys\n"
            "for part in ['\\r  0%|', '\\r 50%|#####', '\\r100%|##########|\\n', 'crlf\\r', '\\n', 'plain\\n']:\n"
            "    sys.stdout.write(part); sys.stdout.flush()\n");
        auto rank = startPython(dir, code);
        QSignalSpy lines(rank.get(), &RankProcess::lineLogged);
        QSignalSpy finished(rank.get(), &RankProcess::finished);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, kWaitMs);
        QCOMPARE(finished.at(0).at(1).toInt(), 0);
        QCOMPARE(loggedLines(lines), (QStringList{QStringLiteral("100%|##########|"), QStringLiteral("crlf"),
                                                  QStringLiteral("plain")}));
    }
};

QTEST_GUILESS_MAIN(TestRankProcess)
#include "tst_rank_process.moc"
