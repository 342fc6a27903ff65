// core/runs job_diff.h: job.json flattened into dotted keys, the keys that differ between runs (or all of
// them), and runs without a job.json (or with a broken one) shown as unknown without deciding anything.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "runs/job_diff.h"
#include "run_fixture.h"

using namespace ringmaster::runs;
using namespace ringmaster::runs::test;

namespace {

// A copy of the fixture's trainer run with trainer.lr and launch.nproc changed.
QString makeRunWith(const QString& root, const QString& name, double lr, int nproc)
{
    const QString dir = makeTrainerRun(root, name, 4);
    QJsonObject job = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/job.json"))).object();
    QJsonObject trainer = job.value(QStringLiteral("trainer")).toObject();
    trainer.insert(QStringLiteral("lr"), lr);
    job.insert(QStringLiteral("trainer"), trainer);
    QJsonObject launch = job.value(QStringLiteral("launch")).toObject();
    launch.insert(QStringLiteral("nproc"), nproc);
    job.insert(QStringLiteral("launch"), launch);
    writeFile(dir + QStringLiteral("/job.json"), QJsonDocument(job).toJson());
    return dir;
}

} // namespace

class TestJobDiff : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void flattensIntoDottedKeys()
    {
        const QJsonObject job = QJsonDocument::fromJson(
            R"({"launch": {"gpus": [0, 1], "nproc": 2, "env": {}, "deep": {"er": {"x": true}}}, "trainer": {"lr": 0.1, "batch_size": "16"}, "note": null, "version": 1})")
                                    .object();
        const FlatJob flat = flattenJob(job);
        QCOMPARE(flat.value(QStringLiteral("trainer.lr")), QStringLiteral("0.1"));   // shortest exact form, not 0.10000000000000001
        QCOMPARE(flat.value(QStringLiteral("trainer.batch_size")), QStringLiteral("16"));
        QCOMPARE(flat.value(QStringLiteral("launch.gpus")), QStringLiteral("[0,1]"));
        QCOMPARE(flat.value(QStringLiteral("launch.nproc")), QStringLiteral("2"));
        QCOMPARE(flat.value(QStringLiteral("launch.env")), QStringLiteral("{}"));
        QCOMPARE(flat.value(QStringLiteral("launch.deep.er.x")), QStringLiteral("true"));
        QCOMPARE(flat.value(QStringLiteral("note")), QStringLiteral("null"));
        QCOMPARE(flat.value(QStringLiteral("version")), QStringLiteral("1"));
        QCOMPARE(flat.size(), 8);
    }

    void listsTheKeysThatDifferOrAll()
    {
        QTemporaryDir root;
        const QString a = makeRunWith(root.path(), QStringLiteral("a"), 0.01, 2);
        const QString b = makeRunWith(root.path(), QStringLiteral("b"), 0.02, 2);
        const QString c = makeRunWith(root.path(), QStringLiteral("c"), 0.01, 4);

        JobDiff diff = diffJobs({a, b});
        QCOMPARE(diff.keys, QStringList{QStringLiteral("trainer.lr")});
        QCOMPARE(diff.value(0, QStringLiteral("trainer.lr")), std::optional<QString>(QStringLiteral("0.01")));
        QCOMPARE(diff.value(1, QStringLiteral("trainer.lr")), std::optional<QString>(QStringLiteral("0.02")));

        diff = diffJobs({a, b, c});
        QCOMPARE(diff.keys, (QStringList{QStringLiteral("launch.nproc"), QStringLiteral("trainer.lr")}));

        // All keys on request: the equal ones too, sorted.
        diff = diffJobs({a, b}, false);
        QVERIFY(diff.keys.contains(QStringLiteral("trainer.model")));
        QVERIFY(diff.keys.contains(QStringLiteral("launch.nproc")));
        QVERIFY(diff.keys.contains(QStringLiteral("trainer.lr")));
        QCOMPARE(diff.keys.size(), flattenJob(QJsonDocument::fromJson(readFile(a + QStringLiteral("/job.json"))).object()).size());
        QVERIFY(std::is_sorted(diff.keys.begin(), diff.keys.end()));

        // The same run twice: nothing differs.
        QVERIFY(diffJobs({a, a}).keys.isEmpty());
    }

    void aKeyOnlyOneRunHasDiffers()
    {
        QTemporaryDir root;
        const QString trainer = makeRunWith(root.path(), QStringLiteral("t"), 0.01, 2);
        const QString script = makeScriptRun(root.path(), QStringLiteral("s"));
        const JobDiff diff = diffJobs({trainer, script});
        QVERIFY(diff.keys.contains(QStringLiteral("launch.script")));    // only the script run has it
        QVERIFY(diff.keys.contains(QStringLiteral("trainer.lr")));       // only the trainer run has it
        QVERIFY(!diff.keys.contains(QStringLiteral("launch.device")));   // cpu in both
        QCOMPARE(diff.value(1, QStringLiteral("trainer.lr")), std::nullopt);
        QCOMPARE(diff.value(1, QStringLiteral("launch.script")), std::optional<QString>(QStringLiteral("/home/me/train.py")));
    }

    void runsWithoutJobJsonAreUnknownAndDecideNothing()
    {
        QTemporaryDir root;
        const QString a = makeRunWith(root.path(), QStringLiteral("a"), 0.01, 2);
        const QString b = makeRunWith(root.path(), QStringLiteral("b"), 0.02, 2);
        const QString bare = makeRunWith(root.path(), QStringLiteral("bare"), 0.01, 2);
        QVERIFY(QFile::remove(bare + QStringLiteral("/job.json")));
        const QString broken = makeRunWith(root.path(), QStringLiteral("broken"), 0.01, 2);
        writeFile(broken + QStringLiteral("/job.json"), "{\"launch\": ");

        const JobDiff diff = diffJobs({a, bare, b, broken});
        QCOMPARE(diff.keys, QStringList{QStringLiteral("trainer.lr")});   // not every key because two runs have none
        QVERIFY(!diff.runs[1].values);
        QCOMPARE(diff.runs[1].problem, QStringLiteral("no job.json"));
        QVERIFY(!diff.runs[3].values);
        QVERIFY2(diff.runs[3].problem.startsWith(QStringLiteral("job.json is not a JSON object")), qPrintable(diff.runs[3].problem));
        QCOMPARE(diff.value(1, QStringLiteral("trainer.lr")), std::nullopt);
        // Only runs without one: nothing to list.
        QVERIFY(diffJobs({bare, broken}, false).keys.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestJobDiff)
#include "tst_job_diff.moc"
