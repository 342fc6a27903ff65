// JobSpec: the job file round-trips and bad files name the key.
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

#include "job_spec.h"
#include "launch_command.h"

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

    void badFilesNameTheProblem_data()
    {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("needle");
        QTest::newRow("syntax") << QByteArrayLiteral("{\"launch\": ") << QStringLiteral("not valid JSON");
        QTest::newRow("version") << QByteArrayLiteral("{\"version\": 9}") << QStringLiteral("version 9");
        QTest::newRow("unknown key") << QByteArrayLiteral("{\"launch\": {\"nprocs\": 2}}") << QStringLiteral("launch.nprocs");
        QTest::newRow("type") << QByteArrayLiteral("{\"launch\": {\"nproc\": \"two\"}}") << QStringLiteral("launch.nproc");
        QTest::newRow("gpus") << QByteArrayLiteral("{\"launch\": {\"gpus\": \"0,1\"}}") << QStringLiteral("launch.gpus");
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
};

QTEST_GUILESS_MAIN(TestJobSpec)
#include "tst_job_spec.moc"
