// The runs library's reading side: the fields of a built-in trainer run and of a script run, damaged runs
// read with what is readable and their problems named, folders that are not runs refused, the per-run
// index used while fresh and rebuilt when a source file changes, listing under several roots, the root's
// index (settled runs answered on their folder's stat alone, every change made as Ringmaster makes it seen:
// a summary replaced, a resume's appended rows, a live run's rows, a folder replaced or become a run), and
// the user's title, notes and colour (notes.json).
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <sys/stat.h>

#include "runs/root_index.h"
#include "runs/run_files.h"
#include "run_fixture.h"
#include "runs/run_index.h"
#include "runs/run_listing.h"
#include "runs/run_notes.h"
#include "runs/run_record.h"

using namespace ringmaster::runs;
using namespace ringmaster::runs::test;

namespace {

// Replaces a file whole, as the trainer and the supervisor write summary.json and job.json (a temporary
// file renamed over it: the folder changes).
void replaceFile(const QString& path, const QByteArray& bytes)
{
    QSaveFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes);
    QVERIFY(file.commit());
}

void appendTo(const QString& path, const QByteArray& bytes)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::Append));
    file.write(bytes);
}

// The root's index trusts a run only once its files have been still for kQuietSeconds (a rule of the
// clock, not a race: the wait is exact).
void waitOutQuietTime()
{
    QTest::qSleep(kQuietSeconds * 1000 + 100);
}

const RunRecord* named(const QList<RunRecord>& runs, const QString& name)
{
    for (const RunRecord& run : runs) {
        if (run.name == name) return &run;
    }
    return nullptr;
}

} // namespace

class TestRunRecord : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void trainerRunFields()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));
        const RunRecord run = readRunRecord(dir);
        QCOMPARE(run.name, QStringLiteral("20261130-140544-mlp"));
        QCOMPARE(run.started, QDateTime(QDate(2026, 11, 30), QTime(14, 5, 44)));
        QCOMPARE(run.status, QStringLiteral("completed"));
        QCOMPARE(run.kind, QStringLiteral("trainer"));
        QCOMPARE(run.model, QStringLiteral("mlp"));
        QCOMPARE(run.worldSize, std::optional<int>(2));
        QCOMPARE(run.steps, std::optional<qint64>(12));
        QCOMPARE(run.finalLoss, std::optional<double>(1.0 / 12));
        QCOMPARE(run.bestValAccuracy, std::optional<double>(0.9));   // the best evaluation, not the last (0.8)
        QCOMPARE(run.durationSeconds, std::optional<double>(3725.4));
        QCOMPARE(run.problems, QStringList());
    }

    void scriptRunFields()
    {
        QTemporaryDir root;
        const RunRecord run = readRunRecord(makeScriptRun(root.path(), QStringLiteral("20261130-144028-train")));
        QCOMPARE(run.kind, QStringLiteral("script"));
        QCOMPARE(run.model, QStringLiteral("train"));
        QCOMPARE(run.status, QStringLiteral("stopped"));
        QCOMPARE(run.worldSize, std::optional<int>(3));
        QCOMPARE(run.steps, std::optional<qint64>(3));
        QCOMPARE(run.finalLoss, std::optional<double>(0.33329999999999999));
        QCOMPARE(run.bestValAccuracy, std::optional<double>(0.75));
        QCOMPARE(run.durationSeconds, std::optional<double>(5.574));
        QCOMPARE(run.problems, QStringList());
    }

    void scriptNamesItsLossAndAccuracyItsOwnWay()
    {
        QTemporaryDir root;
        const QString dir = makeScriptRun(root.path(), QStringLiteral("20261130-144028-train"));
        auto scalars = [&](const QByteArray& rows) {
            QFile file(dir + QStringLiteral("/scalars.csv"));
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write("step,wall_time,name,value\n" + rows);
        };
        // train/loss and val/acc, as TensorBoard-style scripts print them.
        scalars("0,1.0,train/loss,2\n0,1.0,val/acc,0.5\n1,2.0,train/loss,1.5\n1,2.0,val/acc,0.75\n2,3.0,val/acc,0.25\n");
        RunRecord run = readRunRecord(dir);
        QCOMPARE(run.finalLoss, std::optional<double>(1.5));
        QCOMPARE(run.bestValAccuracy, std::optional<double>(0.75));
        // A plain "loss" wins over "train/loss" wherever it comes; "val_accuracy" over "val/acc".
        scalars("0,1.0,loss,4\n0,1.0,val/acc,0.9\n1,2.0,train/loss,1.5\n1,2.0,val_accuracy,0.5\n");
        run = readRunRecord(dir);
        QCOMPARE(run.finalLoss, std::optional<double>(4.0));
        QCOMPARE(run.bestValAccuracy, std::optional<double>(0.5));
    }

    void damagedRunIsReadWithWhatIsReadable()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-150000-mlp"));
        QVERIFY(QFile::remove(dir + QStringLiteral("/summary.json")));
        QByteArray metrics = readFile(dir + QStringLiteral("/metrics.csv"));
        QList<QByteArray> lines = metrics.split('\n');   // line 1 is the header, line k+1 step k
        lines[4] = "4,0,0.25";                            // cut short mid-file (line 5)
        metrics = lines.mid(0, 13).join('\n');            // and the last row (line 13, step 12) has no line end
        metrics.chop(3);
        writeFile(dir + QStringLiteral("/metrics.csv"), metrics);

        const RunRecord run = readRunRecord(dir);
        QCOMPARE(run.status, QStringLiteral("unknown"));
        QCOMPARE(run.steps, std::optional<qint64>(11));
        QCOMPARE(run.finalLoss, std::optional<double>(0.0909090909));   // metrics.csv's %.9g of 1/11
        QCOMPARE(run.bestValAccuracy, std::optional<double>(0.9));
        QCOMPARE(run.model, QStringLiteral("mlp"));
        QVERIFY2(run.problems.contains(QStringLiteral("summary.json missing (the run is still going, or ended without one)")), qPrintable(run.problems.join(QLatin1Char('|'))));
        QVERIFY2(run.problems.contains(QStringLiteral("metrics.csv line 5 truncated (3 of 6 fields)")), qPrintable(run.problems.join(QLatin1Char('|'))));
        QVERIFY2(run.problems.contains(QStringLiteral("metrics.csv line 13 truncated (no line end)")), qPrintable(run.problems.join(QLatin1Char('|'))));
        QCOMPARE(run.problems.size(), 3);
    }

    void invalidSummaryAndMissingJob()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-150000-mlp"));
        writeFile(dir + QStringLiteral("/summary.json"), "{\"status\": \"compl");
        QVERIFY(QFile::remove(dir + QStringLiteral("/job.json")));
        const RunRecord run = readRunRecord(dir);
        QCOMPARE(run.problems.size(), 2);
        QVERIFY2(run.problems.contains(QStringLiteral("job.json missing")), qPrintable(run.problems.join(QLatin1Char('|'))));
        QVERIFY2(run.problems.last().startsWith(QStringLiteral("summary.json is not valid JSON")), qPrintable(run.problems.join(QLatin1Char('|'))));
        QCOMPARE(run.status, QStringLiteral("unknown"));
        QCOMPARE(run.steps, std::optional<qint64>(12));   // from metrics.csv
    }

    void folderThatIsNotARunIsRefused()
    {
        QTemporaryDir root;
        writeFile(root.path() + QStringLiteral("/photos/cat.png"), "png");
        try {
            readRunRecord(root.path() + QStringLiteral("/photos"));
            QFAIL("no RunsError");
        } catch (const RunsError& e) {
            QVERIFY2(e.message().contains(QStringLiteral("is not a run directory")), qPrintable(e.message()));
        }
        QVERIFY(!isRunDirectory(root.path() + QStringLiteral("/photos")));
        QVERIFY(!isRunDirectory(root.path() + QStringLiteral("/nothing-here")));
    }

    void indexIsUsedWhileFreshAndRebuiltWhenStale()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));
        const QString indexPath = dir + QLatin1Char('/') + QString::fromLatin1(kIndexFile);
        IndexUse use = IndexUse::Fresh;
        QCOMPARE(loadRunRecord(dir, &use).steps, std::optional<qint64>(12));
        QCOMPARE(use, IndexUse::Rebuilt);
        QVERIFY(QFile::exists(indexPath));

        // The index, not the files, answers while it is fresh: plant a value only the index holds.
        QJsonObject index = QJsonDocument::fromJson(readFile(indexPath)).object();
        QJsonObject record = index.value(QStringLiteral("record")).toObject();
        record.insert(QStringLiteral("status"), QStringLiteral("from-index"));
        index.insert(QStringLiteral("record"), record);
        writeFile(indexPath, QJsonDocument(index).toJson());
        QCOMPARE(loadRunRecord(dir, &use).status, QStringLiteral("from-index"));
        QCOMPARE(use, IndexUse::Fresh);

        // A new metrics row (a different size): rebuilt from the files.
        QFile metrics(dir + QStringLiteral("/metrics.csv"));
        QVERIFY(metrics.open(QIODevice::Append));
        metrics.write("13,0,0.0769230769,0.01,1651.81,3.250000\n");
        metrics.close();
        QFile::remove(dir + QStringLiteral("/summary.json"));
        RunRecord run = loadRunRecord(dir, &use);
        QCOMPARE(use, IndexUse::Rebuilt);
        QCOMPARE(run.steps, std::optional<qint64>(13));
        QCOMPARE(run.status, QStringLiteral("unknown"));

        // The same size, a later modification time: rebuilt too.
        writeFile(dir + QStringLiteral("/summary.json"), R"({"status": "completed"})");
        loadRunRecord(dir, &use);
        writeFile(dir + QStringLiteral("/summary.json"), R"({"status": "failed!!!"})");
        QFile summary(dir + QStringLiteral("/summary.json"));
        QVERIFY(summary.open(QIODevice::ReadWrite));
        QVERIFY(summary.setFileTime(QDateTime::currentDateTime().addSecs(60), QFileDevice::FileModificationTime));
        summary.close();
        QCOMPARE(loadRunRecord(dir, &use).status, QStringLiteral("failed!!!"));
        QCOMPARE(use, IndexUse::Rebuilt);

        // A missing index is rebuilt; a renamed run keeps its new name.
        QVERIFY(QFile::remove(indexPath));
        QVERIFY(QDir().rename(dir, root.path() + QStringLiteral("/renamed")));
        run = loadRunRecord(root.path() + QStringLiteral("/renamed"), &use);
        QCOMPARE(use, IndexUse::Rebuilt);
        QCOMPARE(run.name, QStringLiteral("renamed"));
        QCOMPARE(loadRunRecord(root.path() + QStringLiteral("/renamed"), &use).name, QStringLiteral("renamed"));
        QCOMPARE(use, IndexUse::Fresh);
    }

    void listsRunsUnderSeveralRoots()
    {
        QTemporaryDir a, b;
        makeTrainerRun(a.path(), QStringLiteral("20261130-140544-mlp"));
        makeScriptRun(b.path(), QStringLiteral("20261129-101500-train"));
        writeFile(a.path() + QStringLiteral("/notes/readme.txt"), "not a run");
        writeFile(a.path() + QStringLiteral("/loose-file.csv"), "step\n");
        const QList<RunRecord> runs = listRuns({a.path(), b.path()});
        QCOMPARE(runs.size(), 2);
        QCOMPARE(runs[0].name, QStringLiteral("20261129-101500-train"));   // oldest first
        QCOMPARE(runs[0].path, QDir(b.path()).absoluteFilePath(QStringLiteral("20261129-101500-train")));
        QCOMPARE(runs[1].name, QStringLiteral("20261130-140544-mlp"));
        QVERIFY_THROWS_EXCEPTION(RunsError, listRuns({a.path(), a.path() + QStringLiteral("/absent")}));
    }

    void rootIndexTrustsSettledRunsAndSeesEveryChange()
    {
        QTemporaryDir root;
        const QString a = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-a"));
        replaceFile(a + QStringLiteral("/summary.json"), R"({"status": "stopped"})");
        const QString b = makeTrainerRun(root.path(), QStringLiteral("20261130-110000-b"));
        const QString c = makeScriptRun(root.path(), QStringLiteral("20261130-120000-c"));
        writeFile(root.path() + QStringLiteral("/photos/cat.txt"), "not a run");
        waitOutQuietTime();
        ListingCounts counts;
        QList<RunRecord> runs = listRuns({root.path()}, &counts);
        QCOMPARE(runs.size(), 3);
        QCOMPARE(counts.reread, 3);
        const QString rootIndex = root.path() + QLatin1Char('/') + QString::fromLatin1(kRootIndexFile);
        QVERIFY(QFile::exists(rootIndex));

        // Settled runs are then answered on their folder's stat alone: plant a value only the root's index holds.
        QJsonObject index = QJsonDocument::fromJson(readFile(rootIndex)).object();
        QJsonObject entries = index.value(QStringLiteral("runs")).toObject();
        QJsonObject entry = entries.value(QStringLiteral("20261130-100000-a")).toObject();
        QVERIFY(entry.value(QStringLiteral("settled")).toBool());
        QJsonObject record = entry.value(QStringLiteral("record")).toObject();
        record.insert(QStringLiteral("status"), QStringLiteral("from-root-index"));
        entry.insert(QStringLiteral("record"), record);
        entries.insert(QStringLiteral("20261130-100000-a"), entry);
        index.insert(QStringLiteral("runs"), entries);
        writeFile(rootIndex, QJsonDocument(index).toJson());
        counts = {};
        runs = listRuns({root.path()}, &counts);
        QCOMPARE(counts.trusted, 3);
        QCOMPARE(named(runs, QStringLiteral("20261130-100000-a"))->status, QStringLiteral("from-root-index"));
        QCOMPARE(named(runs, QStringLiteral("20261130-100000-a"))->path, a);

        // b's summary replaced (as the supervisor writes it): its folder changed, it is read again.
        replaceFile(b + QStringLiteral("/summary.json"), R"({"status": "failed", "steps": 12})");
        counts = {};
        runs = listRuns({root.path()}, &counts);
        QCOMPARE(named(runs, QStringLiteral("20261130-110000-b"))->status, QStringLiteral("failed"));
        QCOMPARE(counts.trusted, 2);
        QCOMPARE(counts.reread, 1);

        // a resumed (it had stopped: its summary.json gives no steps, metrics.csv does): job.json replaced
        // first, then rows appended in place. From the listing in between on, a is not settled (its job.json
        // is newer than its summary), so each row appended is seen though its folder does not change.
        replaceFile(a + QStringLiteral("/job.json"), readFile(a + QStringLiteral("/job.json")));
        runs = listRuns({root.path()});
        QCOMPARE(named(runs, QStringLiteral("20261130-100000-a"))->status, QStringLiteral("stopped"));   // read again
        QCOMPARE(named(runs, QStringLiteral("20261130-100000-a"))->steps, std::optional<qint64>(12));
        for (const qint64 step : {13, 14}) {
            appendTo(a + QStringLiteral("/metrics.csv"), QByteArray::number(step) + ",1,0.07,0.01,1651.81,3.25\n");
            runs = listRuns({root.path()});
            QCOMPARE(named(runs, QStringLiteral("20261130-100000-a"))->steps, std::optional<qint64>(step));
        }

        // A live run (no summary.json yet): never trusted on its folder alone; rows appended in place are seen.
        QVERIFY(QFile::remove(c + QStringLiteral("/summary.json")));
        runs = listRuns({root.path()});
        QCOMPARE(named(runs, QStringLiteral("20261130-120000-c"))->steps, std::optional<qint64>(3));
        appendTo(c + QStringLiteral("/scalars.csv"), "4,1796049634.5,loss,0.25\n");
        counts = {};
        runs = listRuns({root.path()}, &counts);
        QCOMPARE(named(runs, QStringLiteral("20261130-120000-c"))->steps, std::optional<qint64>(4));
        QCOMPARE(named(runs, QStringLiteral("20261130-120000-c"))->finalLoss, std::optional<double>(0.25));
        counts = {};
        listRuns({root.path()}, &counts);
        QCOMPARE(counts.unchanged + counts.trusted, 3);   // c looked into (unchanged), not trusted
        QVERIFY(counts.unchanged >= 1);

        // A folder replaced by another of the same name, and a folder that becomes a run.
        QVERIFY(QDir(b).removeRecursively());
        makeTrainerRun(root.path(), QStringLiteral("20261130-110000-b"), 5);
        writeFile(root.path() + QStringLiteral("/photos/job.json"), R"({"launch": {"script": "train.py", "nproc": 1}})");
        runs = listRuns({root.path()});
        QCOMPARE(runs.size(), 4);
        QCOMPARE(named(runs, QStringLiteral("20261130-110000-b"))->steps, std::optional<qint64>(5));
        QCOMPARE(named(runs, QStringLiteral("photos"))->kind, QStringLiteral("script"));

        // Documented limit: a settled run's file edited in place by hand is seen once its folder changes
        // (touch); opening the run sees it at once.
        waitOutQuietTime();
        listRuns({root.path()});
        counts = {};
        listRuns({root.path()}, &counts);
        QCOMPARE(counts.trusted, 1);   // b is settled again (a, c and photos are not: resumed, live, no summary)
        writeFile(b + QStringLiteral("/summary.json"), R"({"status": "edited"})");
        QCOMPARE(loadRunRecord(b).status, QStringLiteral("edited"));
        QCOMPARE(::utimensat(AT_FDCWD, QFile::encodeName(b).constData(), nullptr, 0), 0);
        runs = listRuns({root.path()});
        QCOMPARE(named(runs, QStringLiteral("20261130-110000-b"))->status, QStringLiteral("edited"));
    }

    void notesAreReadAndMakeTheIndexStale()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));
        IndexUse use = IndexUse::Fresh;
        QVERIFY(loadRunRecord(dir, &use).title.isEmpty());
        QCOMPARE(use, IndexUse::Rebuilt);

        writeRunNotes(dir, {QStringLiteral("  baseline lr 0.01 "), QStringLiteral("first try\nlooks fine")});
        const QJsonObject stored = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/notes.json"))).object();
        QCOMPARE(stored.value(QStringLiteral("title")).toString(), QStringLiteral("baseline lr 0.01"));
        QCOMPARE(stored.value(QStringLiteral("notes")).toString(), QStringLiteral("first try\nlooks fine"));
        QVERIFY(!QFile::exists(dir + QStringLiteral("/notes.json.tmp")));

        // A new notes.json makes the index stale; the record (and list --json) carries title and notes.
        RunRecord run = loadRunRecord(dir, &use);
        QCOMPARE(use, IndexUse::Rebuilt);
        QCOMPARE(run.title, QStringLiteral("baseline lr 0.01"));
        QCOMPARE(run.notes, QStringLiteral("first try\nlooks fine"));
        QCOMPARE(run.toJson().value(QStringLiteral("title")).toString(), QStringLiteral("baseline lr 0.01"));
        QCOMPARE(loadRunRecord(dir, &use).title, QStringLiteral("baseline lr 0.01"));
        QCOMPARE(use, IndexUse::Fresh);

        // An invalid notes.json is a problem of the run, not a failure.
        writeFile(dir + QStringLiteral("/notes.json"), "{not json");
        run = loadRunRecord(dir, &use);
        QVERIFY(run.title.isEmpty());
        QVERIFY2(run.problems.join(QLatin1Char('|')).contains(QStringLiteral("notes.json is not valid JSON")), qPrintable(run.problems.join(QLatin1Char('|'))));
        QVERIFY_THROWS_EXCEPTION(RunsError, writeRunNotes(root.path() + QStringLiteral("/absent"), {QStringLiteral("x"), QString()}));
    }

    void colourIsKeptBesideTitleAndNotes()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));
        writeRunNotes(dir, {QStringLiteral("baseline"), QStringLiteral("first try")});
        writeRunColour(dir, QStringLiteral("#1F77B4"));
        RunNotes notes = readRunNotes(dir);
        QCOMPARE(notes.colour, QStringLiteral("#1f77b4"));
        QCOMPARE(notes.title, QStringLiteral("baseline"));   // the colour writer kept the title and notes
        QCOMPARE(notes.notes, QStringLiteral("first try"));

        // A rename (title and notes only) keeps the colour; the record and list --json carry it.
        writeRunNotes(dir, {QStringLiteral("baseline 2"), QStringLiteral("first try")});
        QCOMPARE(readRunNotes(dir).colour, QStringLiteral("#1f77b4"));
        IndexUse use = IndexUse::Fresh;
        const RunRecord run = loadRunRecord(dir, &use);
        QCOMPARE(run.colour, QStringLiteral("#1f77b4"));
        QCOMPARE(run.toJson().value(QStringLiteral("colour")).toString(), QStringLiteral("#1f77b4"));
        QCOMPARE(RunRecord::fromJson(run.toJson()).colour, QStringLiteral("#1f77b4"));

        // "" removes it; a colour that is not #rrggbb is refused and the file is left as it was.
        QVERIFY_THROWS_EXCEPTION(RunsError, writeRunColour(dir, QStringLiteral("red")));
        QCOMPARE(readRunNotes(dir).colour, QStringLiteral("#1f77b4"));
        writeRunColour(dir, QString());
        notes = readRunNotes(dir);
        QVERIFY(notes.colour.isEmpty());
        QCOMPARE(notes.title, QStringLiteral("baseline 2"));

        // A hand-edited bad colour is a problem of the run, named, not a failure.
        writeFile(dir + QStringLiteral("/notes.json"), R"({"title": "t", "colour": "blue"})");
        QStringList problems;
        notes = readRunNotes(dir, &problems);
        QVERIFY(notes.colour.isEmpty());
        QCOMPARE(notes.title, QStringLiteral("t"));
        QVERIFY2(problems.join(QLatin1Char('|')).contains(QStringLiteral("colour \"blue\" is not #rrggbb")), qPrintable(problems.join(QLatin1Char('|'))));
    }
};

QTEST_GUILESS_MAIN(TestRunRecord)
#include "tst_run_record.moc"
