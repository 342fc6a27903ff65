// What the app's Runs tab reads of a run, without a display (core/runs/opened_run.h, run_evals.h, and
// checkpoint_list.h's resume point): each log's last lines by rank, the evaluations with their wall times, the
// scalars, the step a resume replays up to, and what cannot be read named rather than thrown.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "runs/checkpoint_list.h"
#include "runs/opened_run.h"
#include "runs/run_evals.h"
#include "run_fixture.h"

using namespace ringmaster::runs;

class TestOpenedRun : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void logTailsKeepTheLastLinesOfEachLog()
    {
        QTemporaryDir root;
        const QString run = test::makeTrainerRun(root.path(), QStringLiteral("a"));
        QByteArray many;
        for (int i = 1; i <= 10; ++i) many += "line " + QByteArray::number(i) + '\n';
        test::writeFile(run + QStringLiteral("/logs/rank-1.log"), many);
        test::writeFile(run + QStringLiteral("/logs/notes.log"), "not a rank's\n");
        const auto logs = readLogTails(run, 3);
        QCOMPARE(logs.size(), std::size_t(3)); // ranks 0 and 1, and the launcher as -1; notes.log is nobody's
        QCOMPARE(logs.at(1), (QStringList{QStringLiteral("line 8"), QStringLiteral("line 9"), QStringLiteral("line 10")}));
        QCOMPARE(logs.at(-1), QStringList{QStringLiteral("launching 2 ranks")});
        QVERIFY(logs.at(0).first().endsWith(QStringLiteral("rank 0 of 2 joined")));
    }

    void evaluationsComeWithTheirStepsWallTime()
    {
        QTemporaryDir root;
        const QString run = test::makeTrainerRun(root.path(), QStringLiteral("a"), 12);
        const EvalReading all = readRunEvals(run);
        QVERIFY(all.exists);
        QVERIFY2(all.problems.isEmpty(), qPrintable(all.problems.join(QLatin1Char('\n'))));
        QCOMPARE(all.rows.size(), 3);   // every 4 steps
        QCOMPARE(all.rows[1].step, qint64(8));
        QCOMPARE(all.rows[1].valAccuracy, 0.9);
        QVERIFY(all.rows[1].wallTime.has_value());
        const EvalReading upTo = readRunEvals(run, 7);   // a resume from step 7 replays the first only
        QCOMPARE(upTo.rows.size(), 1);
        test::writeFile(run + QStringLiteral("/eval.csv"), "epoch,step,val_loss\n1,4,0.5\n");
        const EvalReading damaged = readRunEvals(run);
        QCOMPARE(damaged.problems, QStringList{QStringLiteral("eval.csv has no val_accuracy column")});
    }

    void anOpenedRunReadsLogsOnlyWhenAsked()
    {
        QTemporaryDir root;
        const QString run = test::makeTrainerRun(root.path(), QStringLiteral("a"), 12, /*withScalars=*/true);
        const OpenedRun second = readOpenedRun(run, QStringLiteral("a"), 0);
        QCOMPARE(second.label, QStringLiteral("a"));
        QVERIFY(second.logLines.empty());
        QVERIFY(!second.evals.exists);
        QVERIFY(!second.table.records.isEmpty());
        const OpenedRun first = readOpenedRun(run, QStringLiteral("a"), 100);
        QCOMPARE(first.logLines.size(), std::size_t(3));
        QCOMPARE(first.evals.rows.size(), 3);
        QVERIFY(first.record.problems.isEmpty());
        const OpenedRun missing = readOpenedRun(QDir(root.path()).filePath(QStringLiteral("nothing")), QStringLiteral("b"), 100);
        QVERIFY(!missing.record.problems.isEmpty());   // named, not thrown
    }

    void aResumeReplaysUpToItsCheckpoint()
    {
        QTemporaryDir root;
        const QString run = test::makeTrainerRun(root.path(), QStringLiteral("a"), 12);
        const auto checkpoints = listRunCheckpoints(run);
        QVERIFY(!checkpoints.isEmpty());
        QCOMPARE(resumeStepOf(run), checkpoints.last().step);   // a run directory: its newest checkpoint
        QCOMPARE(resumeStepOf(checkpoints.first().path), checkpoints.first().step);
        QCOMPARE(resumeStepOf(QDir(root.path()).filePath(QStringLiteral("nothing"))), qint64(-1));
    }
};

QTEST_GUILESS_MAIN(TestOpenedRun)
#include "tst_opened_run.moc"
