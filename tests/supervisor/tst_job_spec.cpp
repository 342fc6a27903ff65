// JobSpec: the job file round-trips and bad files name the key.
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "supervisor/job_spec.h"
#include "cli/launch_command.h"

using namespace ringmaster::supervisor;

class TestJobSpec : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void roundTrip()
    {
        QTemporaryDir dir;
        JobSpec job = defaultJob(0);
        job.nproc = 3;
        job.maxRestarts = 2;
        job.heartbeatTimeoutSec = 7.5;
        job.setTrainerOption(QStringLiteral("--batch-size"), 32);
        const QString path = dir.filePath(QStringLiteral("job.json"));
        job.save(path);
        const JobSpec loaded = JobSpec::load(path);
        QCOMPARE(loaded.nproc, 3);
        QCOMPARE(loaded.maxRestarts, 2);
        QCOMPARE(loaded.heartbeatTimeoutSec, 7.5);
        QCOMPARE(loaded.trainerOption(QStringLiteral("batch_size")), QStringLiteral("32"));
        QCOMPARE(loaded.toJson(), job.toJson());
    }

    void scriptJobRoundTrips()
    {
        // A script job: its keys come back, no trainer section appears, and a heartbeat timeout that was
        // never given is not written (saving must not switch a script's hang detection on).
        const QByteArray original = QByteArrayLiteral(R"({
          "version": 1,
          "launch": {"device": "cpu", "nproc": 2, "gpus": [], "output_root": "runs", "run_dir": "",
                     "master_port": 0, "max_restarts": 1, "grace_period": 30, "resume": "", "trainer_path": "",
                     "script": "train.py", "script_args": ["--epochs", "3", "--name=a b"], "python": "/usr/bin/python3"}
        })");
        QTemporaryDir dir;
        QFile in(dir.filePath(QStringLiteral("in.json")));
        QVERIFY(in.open(QIODevice::WriteOnly));
        in.write(original);
        in.close();
        const JobSpec job = JobSpec::load(in.fileName());
        QVERIFY(job.isScript());
        QCOMPARE(job.scriptArgs, (QStringList{QStringLiteral("--epochs"), QStringLiteral("3"), QStringLiteral("--name=a b")}));
        QCOMPARE(job.python, QStringLiteral("/usr/bin/python3"));
        QVERIFY(!job.heartbeatTimeoutGiven);
        QCOMPARE(job.runName(), QStringLiteral("train"));
        const QString saved = dir.filePath(QStringLiteral("out.json"));
        job.save(saved);
        QCOMPARE(JobSpec::load(saved).toJson(), QJsonDocument::fromJson(original).object());
        JobSpec timed = job;
        timed.heartbeatTimeoutSec = 30;
        timed.heartbeatTimeoutGiven = true;
        timed.save(saved);
        const JobSpec reloaded = JobSpec::load(saved);
        QVERIFY(reloaded.heartbeatTimeoutGiven);
        QCOMPARE(reloaded.heartbeatTimeoutSec, 30.0);
    }

    void scriptCommandLine()
    {
        JobSpec parsed;
        bool quiet = false;
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--script=train.py"), QStringLiteral("--python"),
                                      QStringLiteral("python3.11"), QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--"),
                                      QStringLiteral("--lr=0.1"), QStringLiteral("--"), QStringLiteral("x")},
                                     &parsed, &quiet));
        QCOMPARE(parsed.script, QStringLiteral("train.py"));
        QCOMPARE(parsed.python, QStringLiteral("python3.11"));
        QCOMPARE(parsed.scriptArgs, (QStringList{QStringLiteral("--lr=0.1"), QStringLiteral("--"), QStringLiteral("x")}));
        QVERIFY(parsed.trainer.isEmpty()); // the built-in defaults are the trainer's
        QVERIFY(!parsed.heartbeatTimeoutGiven);
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--script"), QStringLiteral("t.py"),
                                      QStringLiteral("--heartbeat-timeout"), QStringLiteral("45")}, &parsed, &quiet));
        QVERIFY(parsed.heartbeatTimeoutGiven);
        QCOMPARE(parsed.heartbeatTimeoutSec, 45.0);
        // A trainer job file's flags cannot ride along with --script.
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("job.json"));
        defaultJob(0).save(path);
        try {
            parseLaunchArguments({QStringLiteral("ringmaster-launch"), path, QStringLiteral("--script"), QStringLiteral("t.py")}, &parsed, &quiet);
            QFAIL("a job file with trainer flags was accepted with --script");
        } catch (const JobError& e) {
            QVERIFY2(e.message().contains(QStringLiteral("holds trainer flags")), qPrintable(e.message()));
        }
    }

    void badFilesNameTheProblem_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("needle");
        QTest::newRow("syntax") << QByteArrayLiteral("{\"launch\": ") << QStringLiteral("not valid JSON");
        QTest::newRow("version") << QByteArrayLiteral("{\"version\": 9}") << QStringLiteral("version 9");
        QTest::newRow("unknown key") << QByteArrayLiteral("{\"launch\": {\"nprocs\": 2}}") << QStringLiteral("launch.nprocs");
        QTest::newRow("type") << QByteArrayLiteral("{\"launch\": {\"nproc\": \"two\"}}") << QStringLiteral("launch.nproc");
        QTest::newRow("gpus") << QByteArrayLiteral("{\"launch\": {\"gpus\": \"0,1\"}}") << QStringLiteral("launch.gpus");
        QTest::newRow("fractional gpu") << QByteArrayLiteral("{\"launch\": {\"gpus\": [0, 1.5]}}")
                                        << QStringLiteral("\"launch.gpus\" must hold GPU indices (integers >= 0), not 1.5");
        QTest::newRow("negative gpu") << QByteArrayLiteral("{\"launch\": {\"gpus\": [-1]}}") << QStringLiteral("not -1");
        QTest::newRow("too many restarts") << QByteArrayLiteral("{\"launch\": {\"max_restarts\": 5000}}") << QStringLiteral("launch.max_restarts");
        QTest::newRow("fractional version") << QByteArrayLiteral("{\"version\": 1.5}") << QStringLiteral("job format version 1.5 is not");
        QTest::newRow("string version") << QByteArrayLiteral("{\"version\": \"1\"}") << QStringLiteral("job format version (not a number)");
        QTest::newRow("no ranks") << QByteArrayLiteral("{\"launch\": {\"nproc\": 0}}")
                                  << QStringLiteral("\"launch.nproc\" must be an integer from 1 to 1024");
        QTest::newRow("too many ranks") << QByteArrayLiteral("{\"launch\": {\"nproc\": 100000}}")
                                        << QStringLiteral("\"launch.nproc\" must be an integer from 1 to 1024");
        QTest::newRow("fractional ranks") << QByteArrayLiteral("{\"launch\": {\"nproc\": 2.5}}") << QStringLiteral("launch.nproc");
        QTest::newRow("port") << QByteArrayLiteral("{\"launch\": {\"master_port\": 70000}}") << QStringLiteral("launch.master_port");
        QTest::newRow("restarts") << QByteArrayLiteral("{\"launch\": {\"max_restarts\": -1}}") << QStringLiteral("launch.max_restarts");
        QTest::newRow("script args type") << QByteArrayLiteral("{\"launch\": {\"script\": \"t.py\", \"script_args\": [\"a\", 1]}}")
                                          << QStringLiteral("\"launch.script_args\" must be a list of strings");
        QTest::newRow("script args without script") << QByteArrayLiteral("{\"launch\": {\"script_args\": [\"a\"]}}")
                                                    << QStringLiteral("without \"launch.script\"");
        QTest::newRow("script with trainer flags") << QByteArrayLiteral("{\"launch\": {\"script\": \"t.py\"}, \"trainer\": {\"lr\": 0.1}}")
                                                   << QStringLiteral("\"trainer\" flags cannot be used with \"launch.script\"");
        QTest::newRow("straggler type") << QByteArrayLiteral("{\"launch\": {\"straggler_after\": \"1m\"}}")
                                        << QStringLiteral("launch.straggler_after");
        QTest::newRow("empty python") << QByteArrayLiteral("{\"launch\": {\"python\": \"\"}}") << QStringLiteral("launch.python");
        QTest::newRow("trainer list") << QByteArrayLiteral("{\"trainer\": {\"lr\": [0.1]}}")
                                      << QStringLiteral("\"trainer.lr\" must be a number, a string or true/false");
    }

    void badFilesNameTheProblem()
    {
        QFETCH(QByteArray, content);
        QFETCH(QString, needle);
        QTemporaryDir dir;
        QFile file(dir.filePath(QStringLiteral("job.json")));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(content);
        file.close();
        try {
            JobSpec::load(file.fileName());
            QFAIL("a bad job file was accepted");
        } catch (const JobError& e) {
            QVERIFY2(e.message().contains(needle), qPrintable(e.message()));
        }
    }

    void loadThenSaveChangesNothing()
    {
        // Every launch key, integers past 6 significant digits, a fraction that needs all 17 digits,
        // and trainer flags this version does not know: load -> save must give the same JSON back.
        const QByteArray original = QByteArrayLiteral(R"({
          "version": 1,
          "launch": {"device": "cpu", "nproc": 3, "gpus": [], "output_root": "/data/runs", "run_dir": "/data/runs/a",
                     "master_port": 29517, "max_restarts": 4, "heartbeat_timeout": 90.25, "grace_period": 7.5,
                     "straggler_after": 12.5, "resume": "/data/runs/old", "trainer_path": "/opt/rm/ringmaster-trainer"},
          "trainer": {"seed": 1234567, "max_steps": 9007199254740991, "lr": 0.012345678901234567,
                      "label_smoothing": 0.1, "find_unused_parameters": true, "model": "cnn", "future_flag": "x"}
        })");
        QTemporaryDir dir;
        QFile in(dir.filePath(QStringLiteral("in.json")));
        QVERIFY(in.open(QIODevice::WriteOnly));
        in.write(original);
        in.close();
        const QString saved = dir.filePath(QStringLiteral("out.json"));
        JobSpec::load(in.fileName()).save(saved);
        QFile out(saved);
        QVERIFY(out.open(QIODevice::ReadOnly));
        const QJsonObject expected = QJsonDocument::fromJson(original).object();
        const QJsonObject actual = QJsonDocument::fromJson(out.readAll()).object();
        QCOMPARE(actual, expected);
        QCOMPARE(actual.value(QStringLiteral("trainer")).toObject().value(QStringLiteral("seed")).toDouble(), 1234567.0);
        // As trainer flags (what pre-flight passes on the command line) the numbers stay exact too.
        const JobSpec job = JobSpec::load(in.fileName());
        QCOMPARE(job.trainerOption(QStringLiteral("seed")), QStringLiteral("1234567"));
        QCOMPARE(job.trainerOption(QStringLiteral("max-steps")), QStringLiteral("9007199254740991"));
        QCOMPARE(job.trainerOption(QStringLiteral("lr")).toDouble(), 0.012345678901234567);
        QCOMPARE(job.trainerOption(QStringLiteral("label_smoothing")), QStringLiteral("0.1"));
        QCOMPARE(job.trainerOption(QStringLiteral("find-unused-parameters")), QStringLiteral("true"));
        QCOMPARE(job.stragglerAfterSec, 12.5);
        // The default is not written: a job saved by this version reads the same in one without the key.
        QVERIFY(!JobSpec().toJson().value(QStringLiteral("launch")).toObject().contains(QStringLiteral("straggler_after")));
    }

    void equalsFormsAreHonoured()
    {
        QTemporaryDir dir;
        JobSpec job = defaultJob(0);
        job.setTrainerOption(QStringLiteral("epochs"), 7);
        job.maxRestarts = 3;
        const QString path = dir.filePath(QStringLiteral("job.json"));
        job.save(path);
        JobSpec parsed;
        bool quiet = false;
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--job=") + path,
                                      QStringLiteral("--lr=0.2"), QStringLiteral("--nproc=3")},
                                     &parsed, &quiet));
        QCOMPARE(parsed.trainerOption(QStringLiteral("epochs")), QStringLiteral("7"));
        QCOMPARE(parsed.maxRestarts, 3);
        QCOMPARE(parsed.trainerOption(QStringLiteral("lr")), QStringLiteral("0.2"));
        QCOMPARE(parsed.nproc, 3);
    }

    void disagreeingNprocAndGpusAreAnError()
    {
        JobSpec parsed;
        bool quiet = false;
        for (const QStringList& order : {QStringList{QStringLiteral("--gpus"), QStringLiteral("0,1"), QStringLiteral("--nproc"), QStringLiteral("4")},
                                         QStringList{QStringLiteral("--nproc"), QStringLiteral("4"), QStringLiteral("--gpus"), QStringLiteral("0,1")}}) {
            try {
                parseLaunchArguments(QStringList{QStringLiteral("ringmaster-launch")} + order, &parsed, &quiet);
                QFAIL("--nproc 4 with two GPUs was accepted");
            } catch (const JobError& e) {
                QVERIFY2(e.message().contains(QStringLiteral("--nproc 4 and --gpus (2 GPUs) disagree")), qPrintable(e.message()));
            }
        }
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--gpus"), QStringLiteral("0,1"),
                                      QStringLiteral("--nproc"), QStringLiteral("2")}, &parsed, &quiet));
        QCOMPARE(parsed.worldSize(), 2);
    }

    void nprocIsHonouredOnAGpuMachine()
    {
        // Four (fake) GPUs: --nproc 2 runs 2 ranks on the first two, not one per GPU.
        const QByteArray fake = qgetenv("RINGMASTER_FAKE_NVML");
        if (fake.isEmpty()) QSKIP("RINGMASTER_FAKE_NVML is not set");
        qputenv("RINGMASTER_NVML_LIBRARY", fake);
        qunsetenv("CUDA_VISIBLE_DEVICES");
        JobSpec parsed;
        bool quiet = false;
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--nproc"), QStringLiteral("2")}, &parsed, &quiet));
        QCOMPARE(parsed.device, QStringLiteral("cuda"));
        QCOMPARE(parsed.worldSize(), 2);
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch")}, &parsed, &quiet));
        QCOMPARE(parsed.worldSize(), 4);
        // Under an inherited CUDA_VISIBLE_DEVICES only those GPUs count.
        qputenv("CUDA_VISIBLE_DEVICES", "1,3");
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch")}, &parsed, &quiet));
        QCOMPARE(parsed.worldSize(), 2);
        qunsetenv("CUDA_VISIBLE_DEVICES");
        qunsetenv("RINGMASTER_NVML_LIBRARY");
    }

    void flagsOverrideTheFile()
    {
        QTemporaryDir dir;
        JobSpec job = defaultJob(0);
        job.setTrainerOption(QStringLiteral("lr"), 0.5);
        const QString path = dir.filePath(QStringLiteral("job.json"));
        job.save(path);
        JobSpec parsed;
        bool quiet = false;
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), path, QStringLiteral("--lr"), QStringLiteral("0.1"),
                                      QStringLiteral("--nproc"), QStringLiteral("4"), QStringLiteral("--quiet")},
                                     &parsed, &quiet));
        QCOMPARE(parsed.nproc, 4);
        QVERIFY(quiet);
        QCOMPARE(parsed.trainerOption(QStringLiteral("lr")), QStringLiteral("0.1"));
        QCOMPARE(parsed.trainerOption(QStringLiteral("model")), QStringLiteral("cnn"));
    }

    // The launcher types the trainer flags it passes on by the trainer's option table: the job file then holds
    // numbers and booleans as a hand-written one does; a value the table refuses, or a flag it does not know, stays
    // text for the trainer's pre-flight to word. A new job's values are the table's defaults.
    void trainerFlagsAreTypedByTheOptionTable()
    {
        JobSpec parsed;
        bool quiet = false;
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--epochs"), QStringLiteral("3"),
                                      QStringLiteral("--lr"), QStringLiteral("0.5"), QStringLiteral("--tf32"), QStringLiteral("no"),
                                      QStringLiteral("--optimizer"), QStringLiteral("adam"), QStringLiteral("--batch-size"),
                                      QStringLiteral("0"), QStringLiteral("--made-up"), QStringLiteral("7")},
                                     &parsed, &quiet));
        QCOMPARE(parsed.trainer.value(QStringLiteral("epochs")), QJsonValue(3));
        QCOMPARE(parsed.trainer.value(QStringLiteral("lr")), QJsonValue(0.5));
        QCOMPARE(parsed.trainer.value(QStringLiteral("tf32")), QJsonValue(false));
        QCOMPARE(parsed.trainer.value(QStringLiteral("optimizer")), QJsonValue(QStringLiteral("adam")));
        QCOMPARE(parsed.trainer.value(QStringLiteral("batch_size")), QJsonValue(QStringLiteral("0"))); // below its bound
        QCOMPARE(parsed.trainer.value(QStringLiteral("made_up")), QJsonValue(QStringLiteral("7")));
        const JobSpec fresh = defaultJob(0);
        QCOMPARE(fresh.trainer.value(QStringLiteral("batch_size")), QJsonValue(64));
        QCOMPARE(fresh.trainer.value(QStringLiteral("momentum")), QJsonValue(0.9));
        QCOMPARE(fresh.trainer.value(QStringLiteral("model")), QJsonValue(QStringLiteral("cnn")));
    }

    void flagsBeforeAJobFlagStillWin()
    {
        QTemporaryDir dir;
        JobSpec job = defaultJob(0);
        job.setTrainerOption(QStringLiteral("lr"), 0.5);
        job.setTrainerOption(QStringLiteral("epochs"), 7);
        const QString path = dir.filePath(QStringLiteral("job.json"));
        job.save(path);
        JobSpec parsed;
        bool quiet = false;
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--lr"), QStringLiteral("0.1"),
                                      QStringLiteral("--job"), path},
                                     &parsed, &quiet));
        QCOMPARE(parsed.trainerOption(QStringLiteral("lr")), QStringLiteral("0.1"));
        QCOMPARE(parsed.trainerOption(QStringLiteral("epochs")), QStringLiteral("7"));
    }

    void resumingARunKeepsItsSettings()
    {
        QTemporaryDir runDir;
        JobSpec original = defaultJob(0);
        original.setTrainerOption(QStringLiteral("lr"), 0.25);
        original.setTrainerOption(QStringLiteral("model"), QStringLiteral("mlp"));
        original.masterPort = 41234;      // resolved values, as the launcher writes them
        original.runDir = runDir.path();
        original.save(runDir.filePath(QStringLiteral("job.json")));
        JobSpec parsed;
        bool quiet = false;
        QVERIFY(parseLaunchArguments({QStringLiteral("ringmaster-launch"), QStringLiteral("--resume"), runDir.path(),
                                      QStringLiteral("--epochs"), QStringLiteral("3")},
                                     &parsed, &quiet));
        QCOMPARE(parsed.trainerOption(QStringLiteral("lr")), QStringLiteral("0.25"));
        QCOMPARE(parsed.trainerOption(QStringLiteral("model")), QStringLiteral("mlp"));
        QCOMPARE(parsed.trainerOption(QStringLiteral("epochs")), QStringLiteral("3")); // flags still win
        QCOMPARE(parsed.resume, runDir.path());
        QCOMPARE(parsed.masterPort, 0);
        QVERIFY(parsed.runDir.isEmpty());
    }

    void anEarlierLaunchsResolvedValuesAreDropped()
    {
        // What one launch resolved for itself (as job.json records it) never carries into the next: the GUI's
        // Resume and "New job from this run" and the launcher's --resume all go through these two.
        JobSpec earlier = defaultJob(0);
        earlier.setTrainerOption(QStringLiteral("lr"), 0.25);
        earlier.runDir = QStringLiteral("/runs/a");
        earlier.masterPort = 41234;
        earlier.trainerPath = QStringLiteral("/opt/ringmaster/bin/ringmaster-trainer");
        earlier.trainerPathFromFile = true;
        earlier.resume = QStringLiteral("/runs/older");
        earlier.slurm.enabled = true;
        earlier.slurm.jobId = QStringLiteral("57");
        const JobSpec fresh = earlier.forNewLaunch();
        QVERIFY(fresh.runDir.isEmpty());
        QCOMPARE(fresh.masterPort, 0);
        QVERIFY(fresh.trainerPath.isEmpty());
        QVERIFY(!fresh.trainerPathFromFile);
        QVERIFY(fresh.resume.isEmpty());
        QVERIFY(fresh.slurm.jobId.isEmpty());
        QVERIFY(fresh.slurm.enabled);                                          // the settings stay
        QCOMPARE(fresh.trainerOption(QStringLiteral("lr")), QStringLiteral("0.25"));
        const JobSpec resumed = earlier.forResume(QStringLiteral("/runs/a/checkpoints/step-40.pt"));
        QCOMPARE(resumed.resume, QStringLiteral("/runs/a/checkpoints/step-40.pt"));
        QVERIFY(resumed.runDir.isEmpty());
        QVERIFY(resumed.slurm.jobId.isEmpty());
        QCOMPARE(resumed.masterPort, 0);
    }
};

QTEST_GUILESS_MAIN(TestJobSpec)
#include "tst_job_spec.moc"
