// ringmaster-runs as a user runs it: list (table and --json), export and bundle succeed with exit 0, and
// every kind of bad input is one line on stderr naming the problem, exit 2, and no output file.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>

#include "run_fixture.h"
#include "runs/run_notes.h"

using namespace ringmaster::runs;
using namespace ringmaster::runs::test;

namespace {

constexpr int kProcessTimeoutMs = 60000;

struct Result
{
    int exitCode = -1;
    QString out;
    QString err;
};

Result runsCli(const QStringList& arguments, const QString& workingDirectory = QString(),
               const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment())
{
    QProcess process;
    process.setProcessEnvironment(environment);
    if (!workingDirectory.isEmpty()) process.setWorkingDirectory(workingDirectory);
    process.start(qEnvironmentVariable("RINGMASTER_RUNS"), arguments);
    Result result;
    if (!process.waitForFinished(kProcessTimeoutMs) || process.exitStatus() != QProcess::NormalExit) return result;
    result.exitCode = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

} // namespace

class TestRunsCli : public QObject
{
    Q_OBJECT

private:
    // The app's settings folder ($XDG_CONFIG_HOME) for every ringmaster-runs this test starts: empty unless a
    // test writes the app's settings there, so a user's own ~/.config/Ringmaster never changes the default root.
    QTemporaryDir m_config;

    QString appSettingsFile() const { return m_config.filePath(QStringLiteral("Ringmaster/ringmaster.conf")); }

    // The settings the desktop app leaves after starting a job (ui/main_window.cpp: QSettings, "lastJob").
    void writeAppLastJob(const QString& outputRoot)
    {
        QSettings settings(appSettingsFile(), QSettings::IniFormat);
        const QJsonObject job{{QStringLiteral("version"), 1},
                              {QStringLiteral("launch"), QJsonObject{{QStringLiteral("device"), QStringLiteral("cpu")},
                                                                     {QStringLiteral("nproc"), 2},
                                                                     {QStringLiteral("output_root"), outputRoot}}},
                              {QStringLiteral("trainer"), QJsonObject{{QStringLiteral("model"), QStringLiteral("mlp")}}}};
        settings.setValue(QStringLiteral("lastJob"), QJsonDocument(job).toJson(QJsonDocument::Compact));
        settings.sync();
        QCOMPARE(settings.status(), QSettings::NoError);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY2(QFileInfo(qEnvironmentVariable("RINGMASTER_RUNS")).isExecutable(), "set RINGMASTER_RUNS");
        QVERIFY(m_config.isValid());
        qputenv("XDG_CONFIG_HOME", m_config.path().toUtf8());
    }

    void cleanup() { QFile::remove(appSettingsFile()); }

    void listPrintsATableAndProblems()
    {
        QTemporaryDir root;
        makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));
        const QString damaged = makeScriptRun(root.path(), QStringLiteral("20261130-150000-train"));
        QFile::remove(damaged + QStringLiteral("/summary.json"));
        writeRunNotes(damaged, RunNotes{QStringLiteral("lr sweep"), QString()}); // a title given in the app
        const Result r = runsCli({QStringLiteral("list"), QStringLiteral("--root"), root.path()});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.err, QString());
        const QStringList lines = r.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        QVERIFY2(lines[0].startsWith(QStringLiteral("NAME ")) && lines[0].contains(QStringLiteral("BEST VAL ACC")), qPrintable(lines[0]));
        QCOMPARE(lines[1].simplified(),
                 QStringLiteral("20261130-140544-mlp 2026-11-30 14:05:44 completed trainer mlp 2 12 0.0833333 0.9000 1:02:05"));
        QCOMPARE(lines[2].simplified(), QStringLiteral("20261130-150000-train (lr sweep) 2026-11-30 15:00:00 unknown script train 3 3 0.3333 0.7500 -"));
        QCOMPARE(lines[3], QStringLiteral("    ! summary.json missing (the run is still going, or ended without one)"));
        // Columns are aligned: every row's STATUS starts where the header's does.
        const auto statusColumn = lines[0].indexOf(QStringLiteral("STATUS"));
        QCOMPARE(lines[1].indexOf(QStringLiteral("completed")), statusColumn);
        QCOMPARE(lines[2].indexOf(QStringLiteral("unknown")), statusColumn);
    }

    void listJsonAndTheDefaultRoot()
    {
        QTemporaryDir work;
        makeTrainerRun(work.filePath(QStringLiteral("runs")), QStringLiteral("20261130-140544-mlp"));
        const Result r = runsCli({QStringLiteral("list"), QStringLiteral("--json")}, work.path());
        QCOMPARE(r.exitCode, 0);
        const QJsonArray array = QJsonDocument::fromJson(r.out.toUtf8()).array();
        QCOMPARE(array.size(), 1);
        const QJsonObject run = array[0].toObject();
        QCOMPARE(run.value(QStringLiteral("name")).toString(), QStringLiteral("20261130-140544-mlp"));
        QCOMPARE(run.value(QStringLiteral("steps")).toInt(), 12);
        QCOMPARE(run.value(QStringLiteral("final_loss")).toDouble(), 1.0 / 12);
        QCOMPARE(run.value(QStringLiteral("best_val_accuracy")).toDouble(), 0.9);
        QCOMPARE(run.value(QStringLiteral("world_size")).toInt(), 2);
        QCOMPARE(run.value(QStringLiteral("kind")).toString(), QStringLiteral("trainer"));
        QCOMPARE(run.value(QStringLiteral("problems")).toArray().size(), 0);
        QVERIFY(run.value(QStringLiteral("started")).toString().startsWith(QStringLiteral("2026-11-30T14:05:44")));
    }

    // Without --root, list uses the configured output root: the output folder of the last job the app
    // started (its settings), wherever the shell is; export, bundle and plot find a bare run name there.
    void defaultRootIsTheAppsOutputFolder()
    {
        QTemporaryDir work;   // the shell's folder: no runs/ in it
        const QString appRoot = work.filePath(QStringLiteral("elsewhere/app-runs"));
        const QString run = makeTrainerRun(appRoot, QStringLiteral("20261130-140544-mlp"));
        makeTrainerRun(work.filePath(QStringLiteral("runs")), QStringLiteral("20261201-080000-cnn"));   // the launcher's default: not used
        QVERIFY(QDir().mkpath(work.filePath(QStringLiteral("shell"))));
        const QString shell = work.filePath(QStringLiteral("shell"));
        writeAppLastJob(appRoot);

        Result r = runsCli({QStringLiteral("list"), QStringLiteral("--json")}, shell);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QJsonArray array = QJsonDocument::fromJson(r.out.toUtf8()).array();
        QCOMPARE(array.size(), 1);
        QCOMPARE(array[0].toObject().value(QStringLiteral("name")).toString(), QFileInfo(run).fileName());   // not runs/'s cnn

        const QString csv = work.filePath(QStringLiteral("out.csv"));
        r = runsCli({QStringLiteral("export"), QStringLiteral("20261130-140544-mlp"), QStringLiteral("--out"), csv}, shell);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(r.out, QStringLiteral("wrote 54 scalars of 1 run to %1\n").arg(csv));   // 12 steps x 4 + 3 evals x 2
        QVERIFY(readFile(csv).startsWith("run,step,wall_time,name,value\n20261130-140544-mlp,1,0.25,loss,1\n"));
        r = runsCli({QStringLiteral("bundle"), QStringLiteral("20261130-140544-mlp"), QStringLiteral("--out"), work.filePath(QStringLiteral("b.tar.gz"))}, shell);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));

        // A bare name in neither place: one line naming both.
        r = runsCli({QStringLiteral("export"), QStringLiteral("20990101-000000-none"), QStringLiteral("--out"), csv}, shell);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("20990101-000000-none: no such folder here, nor in %1 (the output folder of the app's last job, from %2)")
                                    .arg(appRoot, appSettingsFile())), qPrintable(r.err));

        // A relative output folder is taken from the current folder, as the launcher takes it.
        writeAppLastJob(QStringLiteral("elsewhere/app-runs"));
        r = runsCli({QStringLiteral("list"), QStringLiteral("--json")}, work.path());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array().size(), 1);
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array()[0].toObject().value(QStringLiteral("name")).toString(),
                 QStringLiteral("20261130-140544-mlp"));

        // The app's folder does not exist: the message says where that default came from.
        writeAppLastJob(work.filePath(QStringLiteral("gone")));
        r = runsCli({QStringLiteral("list")}, shell);
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.err, QStringLiteral("ringmaster-runs: error: no folder \"%1\" (the output folder of the app's last job, from %2): "
                                       "give the folder your runs are in with --root DIR\n").arg(work.filePath(QStringLiteral("gone")), appSettingsFile()));

        // No app settings: the launcher's default, runs in the current folder.
        QVERIFY(QFile::remove(appSettingsFile()));
        r = runsCli({QStringLiteral("list"), QStringLiteral("--json")}, work.path());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).array()[0].toObject().value(QStringLiteral("name")).toString(),
                 QStringLiteral("20261201-080000-cnn"));
        r = runsCli({QStringLiteral("list")}, shell);
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("no folder \"runs\" (the launcher's default output root)")), qPrintable(r.err));
    }

    // A run submitted to Slurm with no final status yet: listed as Slurm says (a stub squeue here), and a
    // finished run (or one never submitted) is never asked about.
    void slurmRunsAreListedAsSlurmSays()
    {
        QTemporaryDir root;
        QTemporaryDir tools;
        const QString queued = makeTrainerRun(root.path(), QStringLiteral("20261201-090000-mlp"));
        QFile::remove(queued + QStringLiteral("/summary.json"));
        QVERIFY(QDir().mkpath(queued + QStringLiteral("/slurm")));
        QFile id(queued + QStringLiteral("/slurm/job-id"));
        QVERIFY(id.open(QIODevice::WriteOnly));
        id.write("57\n");
        id.close();
        makeTrainerRun(root.path(), QStringLiteral("20261130-140544-mlp"));   // completed, not Slurm's
        QFile squeue(tools.filePath(QStringLiteral("squeue")));
        QVERIFY(squeue.open(QIODevice::WriteOnly));
        squeue.write("#!/bin/sh\necho \"$*\" >> \"$(dirname \"$0\")/squeue.args\"\necho 'PENDING|Resources'\n");
        squeue.close();
        squeue.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        auto environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("PATH"), tools.path() + QLatin1Char(':') + environment.value(QStringLiteral("PATH")));
        const Result r = runsCli({QStringLiteral("list"), QStringLiteral("--json"), QStringLiteral("--root"), root.path()}, QString(), environment);
        QCOMPARE(r.exitCode, 0);
        QMap<QString, QString> status;
        for (const auto& run : QJsonDocument::fromJson(r.out.toUtf8()).array()) {
            status.insert(run.toObject().value(QStringLiteral("name")).toString(), run.toObject().value(QStringLiteral("status")).toString());
        }
        QCOMPARE(status.value(QStringLiteral("20261201-090000-mlp")), QStringLiteral("queued"));
        QCOMPARE(status.value(QStringLiteral("20261130-140544-mlp")), QStringLiteral("completed"));
        QFile args(tools.filePath(QStringLiteral("squeue.args")));
        QVERIFY(args.open(QIODevice::ReadOnly));
        const QString asked = QString::fromUtf8(args.readAll());
        QCOMPARE(asked.count(QLatin1Char('\n')), 1);   // asked once, about job 57 only
        QVERIFY2(asked.contains(QStringLiteral("57")), qPrintable(asked));
    }

    void exportAndBundleWrite()
    {
        QTemporaryDir root;
        const QString a = makeTrainerRun(root.path(), QStringLiteral("a"));
        const QString b = makeScriptRun(root.path(), QStringLiteral("b"));
        const QString csv = root.filePath(QStringLiteral("all.csv"));
        Result r = runsCli({QStringLiteral("export"), a, b, QStringLiteral("--out"), csv});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(r.out, QStringLiteral("wrote 61 scalars of 2 runs to %1\n").arg(csv));
        QVERIFY(readFile(csv).startsWith("run,step,wall_time,name,value\na,1,0.25,loss,1\n"));
        QVERIFY(readFile(csv).contains("\nb,0,1796049634.121,\"train/a,b\",7\n"));
        const QString json = root.filePath(QStringLiteral("all.json"));
        r = runsCli({QStringLiteral("export"), b, QStringLiteral("--format=json"), QStringLiteral("--out=") + json});
        QCOMPARE(r.exitCode, 0);
        QCOMPARE(QJsonDocument::fromJson(readFile(json)).array().size(), 7);
        const QString archive = root.filePath(QStringLiteral("a.tar.gz"));
        r = runsCli({QStringLiteral("bundle"), a, QStringLiteral("--out"), archive, QStringLiteral("--with-model")});
        QCOMPARE(r.exitCode, 0);
        QVERIFY2(r.out.startsWith(QStringLiteral("wrote %1 (10 files, ").arg(archive)), qPrintable(r.out));
        // Relative paths, as typed in a shell in the runs' parent folder.
        r = runsCli({QStringLiteral("bundle"), QFileInfo(a).fileName(), QStringLiteral("--out"), QStringLiteral("relative.tar.gz"),
                     QStringLiteral("--with-model")}, QFileInfo(a).absolutePath());
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY2(r.out.startsWith(QStringLiteral("wrote relative.tar.gz (10 files, ")), qPrintable(r.out));
    }

    void badInputIsOneLineAndExit2_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("message");
        QTest::newRow("no command") << QStringList{} << QStringLiteral("give a command (list, export, bundle, plot)");
        QTest::newRow("unknown command") << QStringList{QStringLiteral("frob")} << QStringLiteral("frob: unknown command");
        QTest::newRow("unknown flag") << QStringList{QStringLiteral("list"), QStringLiteral("--colour")} << QStringLiteral("list --colour: unknown flag");
        QTest::newRow("missing root") << QStringList{QStringLiteral("list"), QStringLiteral("--root"), QStringLiteral("ROOT/absent")}
                                      << QStringLiteral("--root ROOT/absent: no such folder");
        QTest::newRow("root without value") << QStringList{QStringLiteral("list"), QStringLiteral("--root")} << QStringLiteral("--root needs a value");
        QTest::newRow("export without run") << QStringList{QStringLiteral("export"), QStringLiteral("--out"), QStringLiteral("ROOT/x.csv")}
                                            << QStringLiteral("export: give at least one run directory");
        QTest::newRow("export without out") << QStringList{QStringLiteral("export"), QStringLiteral("ROOT/run")} << QStringLiteral("give the output file with --out FILE");
        QTest::newRow("not a run") << QStringList{QStringLiteral("export"), QStringLiteral("ROOT/photos"), QStringLiteral("--out"), QStringLiteral("ROOT/x.csv")}
                                   << QStringLiteral("ROOT/photos is not a run directory");
        QTest::newRow("bad format") << QStringList{QStringLiteral("export"), QStringLiteral("ROOT/run"), QStringLiteral("--out"), QStringLiteral("ROOT/x.csv"),
                                                   QStringLiteral("--format"), QStringLiteral("xml")}
                                    << QStringLiteral("--format xml: expected csv or json");
        QTest::newRow("unwritable export") << QStringList{QStringLiteral("export"), QStringLiteral("ROOT/run"), QStringLiteral("--out"), QStringLiteral("ROOT/none/x.csv")}
                                           << QStringLiteral("--out ROOT/none/x.csv: cannot write it");
        QTest::newRow("unwritable bundle") << QStringList{QStringLiteral("bundle"), QStringLiteral("ROOT/run"), QStringLiteral("--out"), QStringLiteral("ROOT/none/x.tar.gz")}
                                           << QStringLiteral("--out ROOT/none/x.tar.gz: cannot write it");
        QTest::newRow("bundle not tar.gz") << QStringList{QStringLiteral("bundle"), QStringLiteral("ROOT/run"), QStringLiteral("--out"), QStringLiteral("ROOT/x.zip")}
                                           << QStringLiteral("name it FILE.tar.gz");
        QTest::newRow("bundle two runs") << QStringList{QStringLiteral("bundle"), QStringLiteral("ROOT/run"), QStringLiteral("ROOT/run"), QStringLiteral("--out"),
                                                        QStringLiteral("ROOT/x.tar.gz")}
                                         << QStringLiteral("bundle: give one run directory (got 2)");
        QTest::newRow("bundle no model") << QStringList{QStringLiteral("bundle"), QStringLiteral("ROOT/script"), QStringLiteral("--out"),
                                                        QStringLiteral("ROOT/x.tar.gz"), QStringLiteral("--with-model")}
                                         << QStringLiteral("has no model.pt");
    }

    void badInputIsOneLineAndExit2()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, message);
        QTemporaryDir root;
        makeTrainerRun(root.path(), QStringLiteral("run"));
        makeScriptRun(root.path(), QStringLiteral("script"));
        writeFile(root.filePath(QStringLiteral("photos/cat.png")), "png");
        for (QString& argument : arguments) argument.replace(QStringLiteral("ROOT"), root.path());
        message.replace(QStringLiteral("ROOT"), root.path());
        const Result r = runsCli(arguments);
        QCOMPARE(r.exitCode, 2);
        QCOMPARE(r.out, QString());
        QVERIFY2(r.err.startsWith(QStringLiteral("ringmaster-runs: error: ")) && r.err.contains(message), qPrintable(r.err));
        QCOMPARE(r.err.count(QLatin1Char('\n')), 1);
        for (const char* output : {"x.csv", "x.tar.gz", "x.zip", "none"}) QVERIFY(!QFileInfo::exists(root.filePath(QString::fromLatin1(output))));
    }

    void helpAndVersion()
    {
        Result r = runsCli({QStringLiteral("--help")});
        QCOMPARE(r.exitCode, 0);
        for (const char* flag : {"list", "export", "bundle", "--root", "--json", "--out", "--format", "--with-checkpoints", "--with-model"}) {
            QVERIFY2(r.out.contains(QString::fromLatin1(flag)), flag);
        }
        r = runsCli({QStringLiteral("--version")});
        QCOMPARE(r.exitCode, 0);
        // The first line is "PROGRAM VERSION"; the Qt, LibTorch and CUDA lines follow (tests/cli/test_version.py).
        QCOMPARE(r.out.section(QLatin1Char('\n'), 0, 0), QStringLiteral("ringmaster-runs %1").arg(QStringLiteral(RINGMASTER_PROJECT_VERSION)));
        QVERIFY(r.out.contains(QStringLiteral("\nQt 6.")));
    }
};

QTEST_GUILESS_MAIN(TestRunsCli)
#include "tst_runs_cli.moc"
