// Control characters in a job's paths and names (issue 22): a job file from someone else with a newline in
// "launch.run_dir" made the Slurm batch script run a command. Every path and name is refused at
// JobSpec::fromJson with one line naming the key and its flag, the batch script writer refuses any that
// reaches it, and sbatch's extra options are an allow-list. (The launcher's own refusals: tst_launch_cli.)
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "supervisor/control_characters.h"
#include "supervisor/job_spec.h"
#include "supervisor/slurm/batch_script.h"
#include "supervisor/slurm/slurm_request.h"

using namespace ringmaster::supervisor;

class TestControlCharacters : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void namesTheCharacter_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("named");
        QTest::newRow("plain") << QStringLiteral("runs/2026 #1 'q' $(x) é 日本") << QString();
        QTest::newRow("newline") << QStringLiteral("runs/z\ntouch INJECTED #") << QStringLiteral("a newline (\\n)");
        QTest::newRow("return") << QStringLiteral("a\rb") << QStringLiteral("a carriage return (\\r)");
        QTest::newRow("tab") << QStringLiteral("a\tb") << QStringLiteral("a tab (\\t)");
        QTest::newRow("nul") << QString(QStringLiteral("a") + QChar(0) + QStringLiteral("b")) << QStringLiteral("NUL (\\0)");
        QTest::newRow("escape") << QStringLiteral("a\x1b" "[2Jb") << QStringLiteral("the control character U+001B");
        QTest::newRow("delete") << QStringLiteral("a\x7f") << QStringLiteral("the control character U+007F");
        QTest::newRow("C1 next line") << QString(QChar(0x85)) << QStringLiteral("the control character U+0085");
    }
    void namesTheCharacter()
    {
        QFETCH(QString, text);
        QFETCH(QString, named);
        QCOMPARE(controlCharacterIn(text), named);
    }

    void jobFilesAreRefusedNamingTheKeyAndFlag_data()
    {
        QTest::addColumn<QJsonObject>("job");
        QTest::addColumn<QString>("expected");
        auto launch = [](const QJsonObject& keys) { return QJsonObject{{QStringLiteral("launch"), keys}}; };
        auto trainer = [](const char* key, const QString& value) {
            return QJsonObject{{QStringLiteral("trainer"), QJsonObject{{QLatin1String(key), value}}}};
        };
        const QString script = QStringLiteral("t.py");
        QTest::newRow("run dir") << launch({{QStringLiteral("run_dir"), QStringLiteral("runs/z\ntouch INJECTED #")},
                                            {QStringLiteral("slurm"), QJsonObject{{QStringLiteral("nodes"), 1}}}})
                                 << QStringLiteral("\"launch.run_dir\" (--out) holds a newline (\\n)");
        QTest::newRow("output root") << launch({{QStringLiteral("output_root"), QStringLiteral("runs\r")}})
                                     << QStringLiteral("\"launch.output_root\" (--output-root) holds a carriage return");
        QTest::newRow("resume") << launch({{QStringLiteral("resume"), QString(QStringLiteral("a") + QChar(0) + QStringLiteral("b"))}})
                                << QStringLiteral("\"launch.resume\" (--resume) holds NUL (\\0)");
        QTest::newRow("trainer path") << launch({{QStringLiteral("trainer_path"), QStringLiteral("/x/ringmaster-trainer\n")}})
                                      << QStringLiteral("\"launch.trainer_path\" (--trainer) holds a newline");
        QTest::newRow("script") << launch({{QStringLiteral("script"), QStringLiteral("train\x1b.py")}})
                                << QStringLiteral("\"launch.script\" (--script) holds the control character U+001B");
        QTest::newRow("python") << launch({{QStringLiteral("script"), script}, {QStringLiteral("python"), QStringLiteral("python3\t-c")}})
                                << QStringLiteral("\"launch.python\" (--python) holds a tab");
        QTest::newRow("tensorboard") << launch({{QStringLiteral("script"), script}, {QStringLiteral("tensorboard_dir"), QStringLiteral("tb\n")}})
                                     << QStringLiteral("\"launch.tensorboard_dir\" (--tensorboard-dir)");
        QTest::newRow("model") << trainer("model", QStringLiteral("m.pt\nrm -rf ~"))
                               << QStringLiteral("\"trainer.model\" (--model) holds a newline");
        QTest::newRow("data") << trainer("val_data", QStringLiteral("d\r"))
                              << QStringLiteral("\"trainer.val_data\" (--val-data) holds a carriage return");
        QTest::newRow("extra arg")
            << launch({{QStringLiteral("slurm"), QJsonObject{{QStringLiteral("extra_args"), QJsonArray{QStringLiteral("--comment=a\x1b" "b")}}}}})
            << QStringLiteral("\"launch.slurm.extra_args[0]\" holds the control character U+001B");
    }
    void jobFilesAreRefusedNamingTheKeyAndFlag()
    {
        QFETCH(QJsonObject, job);
        QFETCH(QString, expected);
        try {
            JobSpec::fromJson(job, QStringLiteral("job.json"));
            QFAIL("no JobError");
        } catch (const JobError& e) {
            QVERIFY2(e.message().startsWith(QStringLiteral("job.json: ")) && e.message().contains(expected), qPrintable(e.message()));
            QVERIFY2(controlCharacterIn(e.message()).isEmpty(), "the message itself must be one clean line");
        }
    }

    // Whatever a caller checked, the writer refuses a value with a control character: no text, no file.
    void batchScriptRefusesControlCharacters()
    {
        QTemporaryDir dir;
        BatchScriptInput input;
        input.job.device = QStringLiteral("cpu");
        input.job.nproc = 1;
        input.request.enabled = true;
        input.runDir = dir.filePath(QStringLiteral("run"));
        input.jobFile = input.runDir + QStringLiteral("/job.json");
        input.trainerPath = QStringLiteral("/opt/rm/bin/ringmaster-trainer");
        QVERIFY(!batchScriptText(input).isEmpty());
        QVERIFY(batchScriptProblem(input).isEmpty());
        for (QString* field : {&input.runDir, &input.trainerPath, &input.resumeFrom, &input.helperDir, &input.request.partition}) {
            const QString saved = *field;
            *field += QStringLiteral("\ntouch INJECTED #");
            QVERIFY(batchScriptText(input).isEmpty());
            QString error;
            QVERIFY(writeBatchScript(input, &error).isEmpty());
            QVERIFY2(error.contains(QStringLiteral("a newline (\\n)")) && !error.contains(QLatin1Char('\n')), qPrintable(error));
            *field = saved;
        }
        QVERIFY2(!QDir(input.runDir).exists(), "nothing written for a refused script");
    }

    // sbatch options a job file may add: an allow-list, with the reason for what is refused.
    void extraArgsAreAnAllowList_data()
    {
        QTest::addColumn<QString>("argument");
        QTest::addColumn<QString>("expected"); // empty: accepted
        QTest::newRow("mem") << QStringLiteral("--mem=64G") << QString();
        QTest::newRow("qos") << QStringLiteral("--qos=high") << QString();
        QTest::newRow("exclusive") << QStringLiteral("--exclusive") << QString();
        QTest::newRow("constraint") << QStringLiteral("--constraint=a100") << QString();
        QTest::newRow("gres other") << QStringLiteral("--gres=nvme:1") << QString();
        QTest::newRow("gres gpu") << QStringLiteral("--gres=gpu:2") << QStringLiteral("asks for GPUs: use launch.slurm.gpus_per_node");
        QTest::newRow("export") << QStringLiteral("--export=NONE") << QStringLiteral("is refused: Ringmaster passes the tasks");
        QTest::newRow("array") << QStringLiteral("--array=1-4") << QStringLiteral("is refused: one Ringmaster run is one Slurm job");
        QTest::newRow("container") << QStringLiteral("--container=/c") << QStringLiteral("is refused: the batch script runs");
        QTest::newRow("requeue") << QStringLiteral("--requeue") << QStringLiteral("is refused: a requeued job would start again");
        QTest::newRow("wrap") << QStringLiteral("--wrap=id") << QStringLiteral("is set by Ringmaster: use the batch script");
        QTest::newRow("chdir") << QStringLiteral("--chdir=/tmp") << QStringLiteral("is set by Ringmaster: use the run directory");
        QTest::newRow("unknown") << QStringLiteral("--uid=0") << QStringLiteral("is not one of the sbatch options a job file may add");
        QTest::newRow("abbreviation") << QStringLiteral("--cons=a100") << QStringLiteral("write it out in full");
    }
    void extraArgsAreAnAllowList()
    {
        QFETCH(QString, argument);
        QFETCH(QString, expected);
        const QJsonObject slurm{{QStringLiteral("extra_args"), QJsonArray{argument}}};
        try {
            const SlurmRequest request = SlurmRequest::fromJson(slurm, QStringLiteral("job.json"));
            QVERIFY2(expected.isEmpty(), qPrintable(argument + QStringLiteral(" was accepted")));
            QCOMPARE(request.extraArgs, QStringList{argument});
        } catch (const JobError& e) {
            QVERIFY2(!expected.isEmpty() && e.message().contains(expected), qPrintable(e.message()));
        }
    }
};

QTEST_GUILESS_MAIN(TestControlCharacters)
#include "tst_control_characters.moc"
