// reportableLines: what a failure report shows of a rank's last lines. C++ stack frames are left out; of a
// Python traceback only the header, the innermost frame and the exception line are kept, and the
// exception line is never pushed out by lines printed after it.
#include <QTest>

#include "supervisor/failure_verdict.h"

using namespace ringmaster::supervisor;

class TestFailureVerdict : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void pythonTracebackShowsTheExceptionLine()
    {
        const QStringList lines{
            QStringLiteral("step 4 loss 0.25"),
            QStringLiteral("Traceback (most recent call last):"),
            QStringLiteral("  File \"/home/u/train.py\", line 80, in <module>"),
            QStringLiteral("    main()"),
            QStringLiteral("  File \"/home/u/train.py\", line 61, in main"),
            QStringLiteral("    train_one_epoch(model)"),
            QStringLiteral("  File \"/home/u/train.py\", line 40, in train_one_epoch"),
            QStringLiteral("    raise RuntimeError(\"boom at step 5\")"),
            QStringLiteral("RuntimeError: boom at step 5"),
        };
        const QStringList shown = reportableLines(lines, 8);
        QCOMPARE(shown, (QStringList{QStringLiteral("step 4 loss 0.25"), QStringLiteral("Traceback (most recent call last):"),
                                     QStringLiteral("  File \"/home/u/train.py\", line 40, in train_one_epoch"),
                                     QStringLiteral("    raise RuntimeError(\"boom at step 5\")"),
                                     QStringLiteral("RuntimeError: boom at step 5")}));
    }

    void linesAfterTheTracebackDoNotHideTheError()
    {
        QStringList lines{QStringLiteral("Traceback (most recent call last):"),
                          QStringLiteral("  File \"t.py\", line 3, in <module>"), QStringLiteral("    f()"),
                          QStringLiteral("ValueError: bad shape")};
        for (int i = 0; i < 10; ++i) lines << QStringLiteral("[W ProcessGroupGloo.cpp:%1] warning at exit").arg(i);
        const QStringList shown = reportableLines(lines, 4);
        QCOMPARE(shown.size(), 4);
        QCOMPARE(shown.first(), QStringLiteral("ValueError: bad shape"));
        QCOMPARE(shown.last(), QStringLiteral("[W ProcessGroupGloo.cpp:9] warning at exit"));
    }

    void cppFramesStayOut()
    {
        const QStringList shown = reportableLines({QStringLiteral("error: x"), QStringLiteral("frame #0: foo"),
                                                   QStringLiteral("terminate called after throwing an instance of 'c10::Error'")}, 8);
        QCOMPARE(shown, QStringList{QStringLiteral("error: x")});
    }

    void peerLossInAScriptIsCollateral()
    {
        RankEnd end;
        end.exitCode = 1;
        QCOMPARE(priorityOf(end, {QStringLiteral("RuntimeError: [/usr/src/gloo/transport/tcp/pair.cc:598] Connection closed by peer [127.0.0.1]:4242")}),
                 FailurePriority::PeerCollateral);
        QCOMPARE(priorityOf(end, {QStringLiteral("RuntimeError: boom at step 5")}), FailurePriority::ExitOne);
    }

    void exitCodesMeanWhatTheProgramSays()
    {
        RankEnd end;
        end.exitCode = 2;
        QCOMPARE(describeEnd(end), QStringLiteral("exited with code 2 (bad input)"));
        end.exitCode = 3;
        QCOMPARE(describeEnd(end), QStringLiteral("exited with code 3 (rendezvous port already in use)"));
        // A script's codes are not the trainer's: 2 is Python's command-line error, 3 is the script's own.
        end.trainerExitCodes = false;
        QCOMPARE(describeEnd(end), QStringLiteral("exited with code 3"));
        end.exitCode = 2;
        QCOMPARE(describeEnd(end), QStringLiteral("exited with code 2 (Python's code for a command-line error, e.g. argparse's: see its log)"));
    }
};

QTEST_GUILESS_MAIN(TestFailureVerdict)
#include "tst_failure_verdict.moc"
