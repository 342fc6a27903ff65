// ringmaster-launch as a user runs it: pre-flight errors launch nothing, SIGTERM stops gracefully,
// SIGKILL of the launcher leaves no trainer behind, plain output when not on a terminal.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "runs/run_index.h"
#include "runs/run_listing.h"
#include "runs/system_table.h"
#include "test_support.h"

using namespace ringmaster::supervisor::test;

namespace {

constexpr int kRunTimeoutMs = 180000;

// A program that only leaves a mark when it runs.
void writeMarkerScript(const QString& path, const QString& marker)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral("#!/bin/sh\ntouch '%1'\n").arg(marker).toUtf8());
    file.close();
    QVERIFY(file.setPermissions(file.permissions() | QFileDevice::ExeOwner));
}

// A stand-in Python: answers pre-flight's torch check with a version, and marks that it ran the script.
void writeFakePython(const QString& path, const QString& marker)
{
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QStringLiteral("#!/bin/sh\nif [ \"$1\" = -c ]; then echo 2.11.0; exit 0; fi\ntouch '%1'\n").arg(marker).toUtf8());
    file.close();
    QVERIFY(file.setPermissions(file.permissions() | QFileDevice::ExeOwner));
}

QStringList baseArguments(const QString& root)
{
    return {QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--output-root"), root,
            QStringLiteral("--threads"), QStringLiteral("1"), QStringLiteral("--eval-batch-size"), QStringLiteral("5000")};
}

} // namespace

class TestLaunchCli : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void preflightErrorsLaunchNothing_data()
    {
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("needle");
        QTest::addColumn<QStringList>("environment");
        const QString fakeNvml = QStringLiteral("RINGMASTER_NVML_LIBRARY=") + qEnvironmentVariable("RINGMASTER_FAKE_NVML");
        QTest::newRow("batch larger than a rank's shard")
            << QStringList{QStringLiteral("--batch-size"), QStringLiteral("100000")} << QStringLiteral("--batch-size 100000")
            << QStringList{};
        // The message names the flag the user typed, never a temporary file they did not write.
        QTest::newRow("not an integer") << QStringList{QStringLiteral("--epochs"), QStringLiteral("abc")}
                                        << QStringLiteral("--epochs") << QStringList{};
        QTest::newRow("too many restarts") << QStringList{QStringLiteral("--max-restarts"), QStringLiteral("5000")}
                                           << QStringLiteral("--max-restarts 5000: must be from 0 to 1000") << QStringList{};
        QTest::newRow("more ranks than gpus") << QStringList{QStringLiteral("--device"), QStringLiteral("cuda"),
                                                             QStringLiteral("--nproc"), QStringLiteral("5")}
                                              << QStringLiteral("--nproc 5: only 4 GPU(s) usable") << QStringList{fakeNvml};
        QTest::newRow("gpu outside inherited visible devices")
            << QStringList{QStringLiteral("--gpus"), QStringLiteral("0")} << QStringLiteral("GPU 0 is not usable here")
            << QStringList{fakeNvml, QStringLiteral("CUDA_VISIBLE_DEVICES=2,3"), QStringLiteral("CUDA_DEVICE_ORDER=PCI_BUS_ID")};
        // The fake GPUs are four different models: indices without PCI order are ambiguous.
        QTest::newRow("inherited indices in fastest-first order")
            << QStringList{QStringLiteral("--gpus"), QStringLiteral("2")} << QStringLiteral("list GPU UUIDs")
            << QStringList{fakeNvml, QStringLiteral("CUDA_VISIBLE_DEVICES=2,3")};
        // GPUs present (the fake NVML) but the trainer has no CUDA: one line naming the command that builds one.
        QTest::newRow("gpu job for a cpu-only trainer")
            << QStringList{QStringLiteral("--device"), QStringLiteral("cuda"), QStringLiteral("--nproc"), QStringLiteral("2")}
            << QStringLiteral("CPU only), but this job runs on GPUs: build a GPU trainer "
                              "against your CUDA PyTorch with ringmaster-build-trainer --python PATH")
            << QStringList{fakeNvml};
        QTest::newRow("gpu out of range") << QStringList{QStringLiteral("--gpus"), QStringLiteral("3")}
                                          << QStringLiteral("GPU 3 does not exist") << QStringList{};
        QTest::newRow("duplicate gpu") << QStringList{QStringLiteral("--gpus"), QStringLiteral("0,0")}
                                       << QStringLiteral("GPU 0 is listed twice") << QStringList{};
        QTest::newRow("missing dataset") << QStringList{QStringLiteral("--data"), QStringLiteral("/nonexistent/data")}
                                         << QStringLiteral("--data /nonexistent/data: no such file or folder") << QStringList{};
        QTest::newRow("bad hyperparameter") << QStringList{QStringLiteral("--batch-size"), QStringLiteral("0")}
                                            << QStringLiteral("--batch-size: must be >= 1") << QStringList{};
        QTest::newRow("unknown trainer flag") << QStringList{QStringLiteral("--learning-rate"), QStringLiteral("1")}
                                              << QStringLiteral("unknown option '--learning-rate'") << QStringList{};
        QTest::newRow("metric pattern without a script")
            << QStringList{QStringLiteral("--metric-pattern"), QStringLiteral("l=(?<l>\\d)")}
            << QStringLiteral("--metric-pattern reads a script's output") << QStringList{};
        QTest::newRow("tensorboard dir without a script") << QStringList{QStringLiteral("--tensorboard-dir"), QStringLiteral("tb")}
                                                          << QStringLiteral("--tensorboard-dir is where a script writes") << QStringList{};
        QTest::newRow("notify command not found") << QStringList{QStringLiteral("--notify-command"), QStringLiteral("no-such-notifier --to ops")}
                                                  << QStringLiteral("--notify-command: no program 'no-such-notifier' on PATH") << QStringList{};
        QTest::newRow("notify command with an open quote") << QStringList{QStringLiteral("--notify-command=true 'x")}
                                                           << QStringLiteral("a quote is not closed") << QStringList{};
        QTest::newRow("bad nproc") << QStringList{QStringLiteral("--nproc"), QStringLiteral("0")}
                                   << QStringLiteral("--nproc 0") << QStringList{};
        QTest::newRow("bad nproc on cpu") << QStringList{QStringLiteral("--device"), QStringLiteral("cpu"),
                                                         QStringLiteral("--nproc"), QStringLiteral("0")}
                                          << QStringLiteral("--nproc 0") << QStringList{};
    }

    void preflightErrorsLaunchNothing()
    {
        QFETCH(QStringList, arguments);
        QFETCH(QString, needle);
        QFETCH(QStringList, environment);
        QTemporaryDir root;
        LaunchProcess launch;
        launch.start(baseArguments(root.path()) + arguments, environment);
        QVERIFY(launch.process.waitForFinished(60000));
        launch.read();
        QCOMPARE(launch.process.exitCode(), 2);
        QVERIFY2(launch.output.contains(needle), qPrintable(launch.output));
        QVERIFY2(!launch.output.contains(QStringLiteral("ringmaster-job-")), qPrintable(launch.output));
        QVERIFY2(launch.output.trimmed().count(QLatin1Char('\n')) == 0, qPrintable(launch.output)); // one line
        QVERIFY2(QDir(root.path()).isEmpty(), "a run directory was created for a job that failed pre-flight");
    }

    void takenPortIsReportedBeforeLaunch()
    {
        QTemporaryDir root;
        QTcpServer taken;
        QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
        LaunchProcess launch;
        launch.start(baseArguments(root.path()) + QStringList{QStringLiteral("--master-port"), QString::number(taken.serverPort())});
        QVERIFY(launch.process.waitForFinished(60000));
        launch.read();
        QCOMPARE(launch.process.exitCode(), 2);
        QVERIFY2(launch.output.contains(QStringLiteral("--master-port %1 is already in use").arg(taken.serverPort())),
                 qPrintable(launch.output));
        QVERIFY(QDir(root.path()).isEmpty());
    }

    void malformedJobFileIsReported()
    {
        QTemporaryDir root;
        QFile job(root.filePath(QStringLiteral("job.json")));
        QVERIFY(job.open(QIODevice::WriteOnly));
        job.write("{\"launch\": {\"nproc\": 2,, }");
        job.close();
        LaunchProcess launch;
        launch.start(QStringList{job.fileName()} + baseArguments(root.filePath(QStringLiteral("runs"))));
        QVERIFY(launch.process.waitForFinished(60000));
        launch.read();
        QCOMPARE(launch.process.exitCode(), 2);
        QVERIFY2(launch.output.contains(QStringLiteral("is not valid JSON")), qPrintable(launch.output));
        QVERIFY(!QFileInfo::exists(root.filePath(QStringLiteral("runs"))));
    }

    // A job file someone else wrote runs only ringmaster-trainer or a script under a Python, never another
    // program it names: each attempt exits 2 before anything runs (the marker file stays absent).
    // A job file may name only the programs this user runs anyway or chose: identity, not names. A stand-in named
    // ringmaster-trainer in a download, a link of that name to another program, an interpreter that is not a Python,
    // or a Python-named program the user never chose: exit 2 before anything runs, one line with the fix.
    void jobFileCannotRunAnotherProgram_data()
    {
        QTest::addColumn<QString>("launch");    // the job file's "launch" object, %1 = the folder of programs
        QTest::addColumn<QString>("needle");
        const QString notOurs = QStringLiteral("is not the trainer this installation runs nor one you have chosen");
        QTest::newRow("trainer_path names another program") << QStringLiteral(R"({"trainer_path": "%1/evil"})") << notOurs;
        QTest::newRow("a program named ringmaster-trainer in a download")
            << QStringLiteral(R"({"trainer_path": "%1/Downloads/ringmaster-trainer"})") << notOurs;
        QTest::newRow("a link named ringmaster-trainer to another program")
            << QStringLiteral(R"({"trainer_path": "%1/link/ringmaster-trainer"})") << notOurs;
        QTest::newRow("python names another program")
            << QStringLiteral(R"({"script": "%1/train.py", "python": "%1/evil"})") << QStringLiteral("is not a Python interpreter");
        QTest::newRow("a link named python3 to another program")
            << QStringLiteral(R"({"script": "%1/train.py", "python": "%1/link/python3"})") << QStringLiteral("is not a Python interpreter");
        QTest::newRow("a python the user never chose")
            << QStringLiteral(R"({"script": "%1/train.py", "python": "%1/Downloads/python3"})")
            << QStringLiteral("is an interpreter you have not used with Ringmaster on this machine: to run the script with it, give --python");
    }

    void jobFileCannotRunAnotherProgram()
    {
        QFETCH(QString, launch);
        QFETCH(QString, needle);
        QTemporaryDir root;
        const QString bin = root.filePath(QStringLiteral("bin"));
        const QString marker = root.filePath(QStringLiteral("ran"));
        QVERIFY(QDir().mkpath(bin + QStringLiteral("/link")));
        QVERIFY(QDir().mkpath(bin + QStringLiteral("/Downloads")));
        for (const QString& name : {QStringLiteral("evil"), QStringLiteral("Downloads/ringmaster-trainer"), QStringLiteral("Downloads/python3")}) {
            writeMarkerScript(bin + QLatin1Char('/') + name, marker);
        }
        QVERIFY(QFile::link(bin + QStringLiteral("/evil"), bin + QStringLiteral("/link/ringmaster-trainer")));
        QVERIFY(QFile::link(bin + QStringLiteral("/evil"), bin + QStringLiteral("/link/python3")));
        QFile script(bin + QStringLiteral("/train.py"));
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write("print('hello')\n");
        script.close();
        QFile job(root.filePath(QStringLiteral("job.json")));
        QVERIFY(job.open(QIODevice::WriteOnly));
        job.write(QStringLiteral(R"({"version": 1, "launch": %1})").arg(launch.arg(bin)).toUtf8());
        job.close();

        LaunchProcess process;
        process.start({job.fileName(), QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs"))},
                      {QStringLiteral("XDG_CONFIG_HOME=") + root.filePath(QStringLiteral("config"))});
        QVERIFY(process.process.waitForFinished(60000));
        process.read();
        QCOMPARE(process.process.exitCode(), 2);
        QVERIFY2(process.output.contains(needle), qPrintable(process.output));
        QVERIFY(!QFileInfo::exists(marker));
        QVERIFY(!QFileInfo::exists(root.filePath(QStringLiteral("runs"))));
    }

    // What the user chose on the command line is remembered: a job file naming the same file afterwards is accepted,
    // while a copy of the same trainer elsewhere (another file) is not. A link to the trainer is that trainer.
    void jobFileProgramsAreTrustedByIdentity()
    {
        QTemporaryDir root;
        const QStringList config{QStringLiteral("XDG_CONFIG_HOME=") + root.filePath(QStringLiteral("config")),
                                 QStringLiteral("XDG_DATA_HOME=") + root.filePath(QStringLiteral("data"))};
        const QString copy = root.filePath(QStringLiteral("elsewhere/ringmaster-trainer"));
        QVERIFY(QDir().mkpath(QFileInfo(copy).absolutePath()));
        QVERIFY(QFile::copy(trainerPath(), copy));
        QVERIFY(QFile::setPermissions(copy, QFileDevice::ReadOwner | QFileDevice::ExeOwner));
        const QString link = root.filePath(QStringLiteral("link/ringmaster-trainer"));
        QVERIFY(QDir().mkpath(QFileInfo(link).absolutePath()));
        QVERIFY(QFile::link(trainerPath(), link));
        const QStringList quick{QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs")), QStringLiteral("--threads"),
                                QStringLiteral("1"), QStringLiteral("--max-steps"), QStringLiteral("2"), QStringLiteral("--nproc"),
                                QStringLiteral("1"), QStringLiteral("--eval-batch-size"), QStringLiteral("5000")};
        const auto jobNaming = [&root](const QString& trainer) {
            const QString path = root.filePath(QStringLiteral("job-%1.json").arg(qHash(trainer)));
            QFile job(path);
            job.open(QIODevice::WriteOnly);
            job.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), 1},
                                                {QStringLiteral("launch"), QJsonObject{{QStringLiteral("trainer_path"), trainer}}}}).toJson());
            return path;
        };
        const auto run = [&](const QStringList& arguments) {
            LaunchProcess launch;
            launch.start(arguments + quick, config, {QStringLiteral("RINGMASTER_TRAINER")});
            launch.finish(kRunTimeoutMs);
            return std::make_pair(launch.process.exitCode(), launch.output);
        };
        // RINGMASTER_TRAINER unset: the launcher finds the trainer beside itself, which is the build's.
        auto [code, output] = run({jobNaming(link)});
        QVERIFY2(code == 0, qPrintable(output));
        std::tie(code, output) = run({jobNaming(copy)});
        QCOMPARE(code, 2);
        QVERIFY2(output.contains(QStringLiteral("give it on the command line with --trainer %1").arg(copy)), qPrintable(output));
        std::tie(code, output) = run({QStringLiteral("--trainer"), copy});
        QVERIFY2(code == 0, qPrintable(output));
        std::tie(code, output) = run({jobNaming(copy)});
        QVERIFY2(code == 0, qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("trainer %1 (LibTorch").arg(copy)), qPrintable(output));

        // An interpreter: refused from the file, run when given with --python, then accepted from the file.
        const QString python = root.filePath(QStringLiteral("venv/bin/python3"));
        const QString marker = root.filePath(QStringLiteral("ran"));
        QVERIFY(QDir().mkpath(QFileInfo(python).absolutePath()));
        writeFakePython(python, marker);
        const QString script = root.filePath(QStringLiteral("train.py"));
        QFile(script).open(QIODevice::WriteOnly);
        const QString scriptJob = root.filePath(QStringLiteral("script.json"));
        QFile job(scriptJob);
        QVERIFY(job.open(QIODevice::WriteOnly));
        job.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), 1},
                                            {QStringLiteral("launch"), QJsonObject{{QStringLiteral("script"), script},
                                                                                   {QStringLiteral("python"), python},
                                                                                   {QStringLiteral("nproc"), 1}}}}).toJson());
        job.close();
        const QStringList out{QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs"))};
        LaunchProcess refused;
        refused.start(QStringList{scriptJob} + out, config);
        QVERIFY(refused.finish(60000));
        QCOMPARE(refused.process.exitCode(), 2);
        QVERIFY2(refused.output.contains(QStringLiteral("give --python %1 on the command line").arg(python)), qPrintable(refused.output));
        QVERIFY(!QFileInfo::exists(marker));
        LaunchProcess chosen;
        chosen.start(QStringList{scriptJob, QStringLiteral("--python"), python} + out, config);
        QVERIFY(chosen.finish(60000));
        QVERIFY2(chosen.process.exitCode() == 0, qPrintable(chosen.output));
        QVERIFY(QFileInfo::exists(marker));
        LaunchProcess accepted;
        accepted.start(QStringList{scriptJob} + out, config);
        QVERIFY(accepted.finish(60000));
        QVERIFY2(accepted.process.exitCode() == 0, qPrintable(accepted.output));
    }

    // The default interpreter, named by a job file through a link in a folder any user may write: the link passes the
    // identity check now but could be re-pointed before the run, so it is refused.
    void jobFileInterpreterInAFolderOthersCanChangeIsRefused()
    {
        QTemporaryDir root;
        const QString python = QStandardPaths::findExecutable(QStringLiteral("python3"));
        QVERIFY(!python.isEmpty());
        const QString open = root.filePath(QStringLiteral("open"));
        QVERIFY(QDir().mkpath(open));
        QVERIFY(QFile::setPermissions(open, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner | QFileDevice::ReadOther |
                                                QFileDevice::WriteOther | QFileDevice::ExeOther));
        QVERIFY(QFile::link(QFileInfo(python).canonicalFilePath(), open + QStringLiteral("/python3")));
        const QString script = writeFile(root.filePath(QStringLiteral("train.py")), "print('hello')\n");
        QFile job(root.filePath(QStringLiteral("job.json")));
        QVERIFY(job.open(QIODevice::WriteOnly));
        job.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), 1},
                                            {QStringLiteral("launch"), QJsonObject{{QStringLiteral("script"), script},
                                                                                   {QStringLiteral("python"), QString(open + QStringLiteral("/python3"))}}}})
                      .toJson());
        job.close();
        LaunchProcess process;
        process.start({job.fileName(), QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs"))},
                      {QStringLiteral("XDG_CONFIG_HOME=") + root.filePath(QStringLiteral("config"))});
        QVERIFY(process.finish(60000));
        QCOMPARE(process.process.exitCode(), 2);
        QVERIFY2(process.output.contains(QStringLiteral("lies where another user could change what it names")), qPrintable(process.output));
        QVERIFY(!QFileInfo::exists(root.filePath(QStringLiteral("runs"))));
    }

    // Issue 22's second way in: a newline in a job file's run directory went raw into the Slurm batch script's
    // comment line and ran what followed. Refused before anything is written or submitted, for the job file's
    // key and for the flag alike; no file appears.
    void controlCharactersInPathsRunNothing_data()
    {
        QTest::addColumn<bool>("inFile");
        QTest::newRow("job file run_dir") << true;
        QTest::newRow("--out flag") << false;
    }
    void controlCharactersInPathsRunNothing()
    {
        QFETCH(bool, inFile);
        QTemporaryDir root;
        const QString injected = root.filePath(QStringLiteral("INJECTED"));
        const QString runDir = root.filePath(QStringLiteral("runs/z\ntouch ")) + injected + QStringLiteral(" #");
        QStringList arguments;
        if (inFile) {
            QFile job(root.filePath(QStringLiteral("job.ringmaster.json")));
            QVERIFY(job.open(QIODevice::WriteOnly));
            job.write(QJsonDocument(QJsonObject{{QStringLiteral("version"), 1},
                                                {QStringLiteral("launch"), QJsonObject{{QStringLiteral("run_dir"), runDir},
                                                                                       {QStringLiteral("slurm"), QJsonObject{{QStringLiteral("nodes"), 1}}}}}})
                          .toJson());
            job.close();
            arguments << job.fileName();
        } else {
            arguments << QStringLiteral("--slurm") << QStringLiteral("--out") << runDir;
        }
        LaunchProcess launch;
        launch.start(arguments + QStringList{QStringLiteral("--trainer"), trainerPath()});
        QVERIFY(launch.process.waitForFinished(60000));
        launch.read();
        QCOMPARE(launch.process.exitCode(), 2);
        QVERIFY2(launch.output.contains(QStringLiteral("\"launch.run_dir\" (--out) holds a newline (\\n)")), qPrintable(launch.output));
        QVERIFY2(launch.output.trimmed().count(QLatin1Char('\n')) == 0, qPrintable(launch.output));
        QVERIFY(!QFileInfo::exists(injected));
        QVERIFY2(!QDir(root.filePath(QStringLiteral("runs"))).exists(), "nothing may be written for a refused job");
    }

    // The job file may name the real trainer, and --trainer on the command line may name anything.
    void jobFileMayNameTheTrainer()
    {
        QTemporaryDir root;
        QFile job(root.filePath(QStringLiteral("job.json")));
        QVERIFY(job.open(QIODevice::WriteOnly));
        job.write(QStringLiteral(R"({"version": 1, "launch": {"trainer_path": "%1"}})").arg(trainerPath()).toUtf8());
        job.close();
        LaunchProcess launch;
        launch.start({job.fileName(), QStringLiteral("--output-root"), root.filePath(QStringLiteral("runs")), QStringLiteral("--threads"),
                      QStringLiteral("1"), QStringLiteral("--max-steps"), QStringLiteral("3"), QStringLiteral("--eval-batch-size"), QStringLiteral("5000")});
        QVERIFY(launch.process.waitForFinished(kRunTimeoutMs));
        launch.read();
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("completed: 3 steps")), qPrintable(launch.output));
    }

    // The CUDA build's trainer (scripts/test.sh passes build-cuda's as RINGMASTER_CUDA_TRAINER) given with --trainer
    // trains 2 CPU ranks to the end; the launcher names it with what its --version says it was built with.
    void cudaTrainerRunsOnCpuRanks()
    {
        const QString cuda = qEnvironmentVariable("RINGMASTER_CUDA_TRAINER");
        if (cuda.isEmpty()) QSKIP("RINGMASTER_CUDA_TRAINER is not set (scripts/test.sh sets it to build-cuda's trainer)");
        QProcess version;
        version.start(cuda, {QStringLiteral("--version")});
        QVERIFY(version.waitForFinished(60000));
        const QString said = QString::fromUtf8(version.readAllStandardOutput());
        const auto field = [&said](const QString& pattern) {
            return QRegularExpression(pattern, QRegularExpression::MultilineOption).match(said).captured(1);
        };
        const QString libtorch = field(QStringLiteral("^LibTorch (\\S+)$"));
        const QString cudaVersion = field(QStringLiteral("^CUDA: yes \\((\\S+)\\)$"));
        const QString nccl = field(QStringLiteral("^NCCL: yes \\((\\S+)\\)$"));
        QVERIFY2(!libtorch.isEmpty() && !cudaVersion.isEmpty() && !nccl.isEmpty(), qPrintable(said));
        QTemporaryDir root;
        LaunchProcess launch;
        QStringList arguments = baseArguments(root.path());
        arguments[1] = cuda; // --trainer
        launch.start(arguments + QStringList{QStringLiteral("--device"), QStringLiteral("cpu"), QStringLiteral("--nproc"),
                                             QStringLiteral("2"), QStringLiteral("--max-steps"), QStringLiteral("8")});
        QVERIFY(launch.process.waitForFinished(kRunTimeoutMs));
        launch.read();
        QVERIFY2(launch.process.exitCode() == 0, qPrintable(launch.output));
        QVERIFY2(launch.output.contains(QStringLiteral("trainer %1 (LibTorch %2, CUDA %3, NCCL %4)")
                                            .arg(QFileInfo(cuda).absoluteFilePath(), libtorch, cudaVersion, nccl)),
                 qPrintable(launch.output));
        QVERIFY(launch.output.contains(QStringLiteral("completed: 8 steps")));
    }

    void plainOutputAndSummaryWhenPiped()
    {
        QTemporaryDir root;
        QTemporaryDir notified;
        LaunchProcess launch;
        launch.start(baseArguments(root.path()) + notifyArguments(notified.path()) + QStringList{QStringLiteral("--max-steps"), QStringLiteral("30")});
        QVERIFY(launch.process.waitForFinished(kRunTimeoutMs));
        launch.read();
        QCOMPARE(launch.process.exitCode(), 0);
        QVERIFY2(!launch.output.contains(QLatin1Char('\r')), "progress redraws must not reach a pipe");
        QVERIFY(launch.output.contains(QStringLiteral("epoch 0  step 30/30")));
        QVERIFY(launch.output.contains(QStringLiteral("completed: 30 steps")));
        QVERIFY2(launch.output.contains(QStringLiteral("trainer %1 (LibTorch ").arg(trainerPath())), qPrintable(launch.output));
        // --notify-command: the trainer's summary in one line.
        const QList<QJsonObject> events = notifiedEvents(notified.path());
        QCOMPARE(events.size(), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("completed"));
        const QJsonObject summary = readJson(launch.runDir() + QStringLiteral("/summary.json"));
        QCOMPARE(events.at(0).value(QStringLiteral("summary")).toObject(), summary);
        const QString message = events.at(0).value(QStringLiteral("message")).toString();
        QVERIFY2(message.startsWith(QStringLiteral("30 steps, loss %1, val_accuracy ")
                                        .arg(QString::number(summary.value(QStringLiteral("final_loss")).toDouble(), 'g', 5))),
                 qPrintable(message));
        // What each rank used, sampled from its first moment: system.csv, read back as the export reads it.
        QVERIFY2(launch.output.contains(QRegularExpression(QStringLiteral("system metrics: [1-9]\\d* sample\\(s\\) in system.csv; sampling used "
                                                                          "[\\d.]+% of one core"))),
                 qPrintable(launch.output));
        QStringList series;
        for (const auto& record : ringmaster::runs::readRunSystem(launch.runDir()).records) series << record.name;
        for (const QString& name : {QStringLiteral("system/rank0/rss_mib"), QStringLiteral("system/rank1/rss_mib"),
                                    QStringLiteral("system/rank0/threads"), QStringLiteral("system/rank1/threads")}) {
            QVERIFY2(series.contains(name), qPrintable(series.join(QLatin1Char(' '))));
        }
    }

    void theSlowRankIsNamedNotTheRanksWaitingForIt()
    {
        // Rank 1 sleeps 30 ms in each step's compute (the trainer's test hook). Both ranks' steps last as long,
        // since rank 0 waits for rank 1's gradients in the all-reduce, inside backward: only step timing that
        // counts that wait as waiting, not as computing, can tell them apart.
        QTemporaryDir root;
        QTemporaryDir notified;
        LaunchProcess launch;
        launch.start(baseArguments(root.path()) + notifyArguments(notified.path()) +
                         QStringList{QStringLiteral("--model"), QStringLiteral("linear"), QStringLiteral("--data"), QStringLiteral("synthetic"),
                                     QStringLiteral("--synthetic-samples"), QStringLiteral("256"), QStringLiteral("--batch-size"), QStringLiteral("16"),
                                     QStringLiteral("--epochs"), QStringLiteral("1000"), QStringLiteral("--eval-every"), QStringLiteral("0"),
                                     QStringLiteral("--checkpoint-every"), QStringLiteral("100000"),
                                     QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--straggler-after"), QStringLiteral("2")},
                     {QStringLiteral("RINGMASTER_TEST_SLOW_RANK=1:30")});
        QVERIFY2(launch.waitForOutput(QStringLiteral("[launcher] straggler: "), kRunTimeoutMs), qPrintable(launch.output));
        // The live line names the slowest rank too (a pipe gets it every couple of seconds).
        QVERIFY2(launch.waitForOutput(QStringLiteral("  slowest rank "), kRunTimeoutMs), qPrintable(launch.output));
        QCOMPARE(::kill(static_cast<pid_t>(launch.process.processId()), SIGTERM), 0);
        QVERIFY(launch.process.waitForFinished(60000));
        launch.read();
        QCOMPARE(launch.process.exitCode(), 3);
        const QRegularExpression named(QStringLiteral("\\[launcher\\] straggler: rank (\\d+) computes ([\\d.]+)x slower than the others "
                                                      "\\(([\\d.]+) ms a step against their median of ([\\d.]+) ms\\) for 2 s"));
        const auto match = named.match(launch.output);
        QVERIFY2(match.hasMatch(), qPrintable(launch.output));
        QCOMPARE(match.captured(1), QStringLiteral("1"));
        QVERIFY2(match.captured(3).toDouble() >= 30.0, qPrintable(match.captured(0))); // the slept 30 ms are compute
        QVERIFY2(match.captured(4).toDouble() < 10.0, qPrintable(match.captured(0)));  // rank 0's wait is not
        QCOMPARE(launch.output.count(QStringLiteral("straggler: rank")), 1);
        const auto slowest = QRegularExpression(QStringLiteral("  slowest rank (\\d+) \\(([\\d.]+)x\\)")).match(launch.output);
        QVERIFY2(slowest.hasMatch() && slowest.captured(1) == QStringLiteral("1") && slowest.captured(2).toDouble() > 1.2,
                 qPrintable(launch.output));
        // Recorded in the run's launcher log, and sent to the notify command before the run's end.
        const QString dir = launch.runDir();
        QVERIFY(readAll(dir + QStringLiteral("/logs/launcher.log")).contains(QStringLiteral("straggler: rank 1 computes ")));
        const QList<QJsonObject> events = notifiedEvents(notified.path());
        QCOMPARE(events.size(), 2);
        QCOMPARE(events.at(0).value(QStringLiteral("event")).toString(), QStringLiteral("straggler"));
        QCOMPARE(events.at(0).value(QStringLiteral("rank")).toInt(), 1);
        QCOMPARE(events.at(0).value(QStringLiteral("title")).toString(),
                 QStringLiteral("run %1: rank 1 is a straggler").arg(QFileInfo(dir).fileName()));
        QVERIFY(events.at(0).value(QStringLiteral("message")).toString().startsWith(QStringLiteral("rank 1 computes ")));
        QCOMPARE(events.at(1).value(QStringLiteral("event")).toString(), QStringLiteral("stopped"));
        // And in summary.json (so in the stopped event's summary too).
        const QJsonArray stragglers = readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("stragglers")).toArray();
        QCOMPARE(stragglers.size(), 1);
        QCOMPARE(stragglers.at(0).toObject().value(QStringLiteral("rank")).toInt(), 1);
        QCOMPARE(stragglers.at(0).toObject().value(QStringLiteral("message")).toString(), events.at(0).value(QStringLiteral("message")).toString());
        QVERIFY(!stragglers.at(0).toObject().value(QStringLiteral("time")).toString().isEmpty());
        QCOMPARE(events.at(1).value(QStringLiteral("summary")).toObject().value(QStringLiteral("stragglers")).toArray(), stragglers);
    }

    void aStragglerTimeOutOfRangeIsRefused()
    {
        QTemporaryDir root;
        for (const QString& value : {QStringLiteral("-1"), QStringLiteral("1e9"), QStringLiteral("soon")}) {
            LaunchProcess launch;
            launch.start(baseArguments(root.path()) + QStringList{QStringLiteral("--straggler-after"), value});
            QVERIFY(launch.process.waitForFinished(60000));
            launch.read();
            QCOMPARE(launch.process.exitCode(), 2);
            QVERIFY2(launch.output.trimmed().count(QLatin1Char('\n')) == 0 && launch.output.contains(QStringLiteral("--straggler-after")),
                     qPrintable(launch.output));
        }
        QVERIFY(QDir(root.path()).entryList(QDir::NoDotAndDotDot | QDir::AllEntries).isEmpty());
    }

    void sigtermStopsGracefullyWithFinalCheckpoint()
    {
        QTemporaryDir root;
        // A notify command that fails (after reading its event) is reported; the run's exit code does not change.
        QTemporaryDir notified;
        const QString mailer = writeFile(notified.filePath(QStringLiteral("mailer.sh")),
                                         "#!/bin/sh\ncat >> \"$1\"\necho 'mail: no route to host' >&2\nexit 5\n", true);
        const QString events = notified.filePath(QStringLiteral("events.jsonl"));
        LaunchProcess launch;
        launch.start(baseArguments(root.path()) + QStringList{QStringLiteral("--epochs"), QStringLiteral("20"), QStringLiteral("--notify-command"),
                                                              QStringLiteral("%1 %2").arg(mailer, events)});
        QVERIFY(launch.waitForOutput(QStringLiteral("state: running"), kRunTimeoutMs));
        const QString dir = launch.runDir();
        QVERIFY(!dir.isEmpty());
        QVERIFY(QTest::qWaitFor([&] { return csvRows(dir + QStringLiteral("/metrics.csv")) >= 5; }, kRunTimeoutMs));
        const auto pids = trainerPids(dir);
        QCOMPARE(pids.size(), 2);
        QCOMPARE(::kill(static_cast<pid_t>(launch.process.processId()), SIGTERM), 0);
        QVERIFY(launch.process.waitForFinished(60000));
        launch.read();
        QCOMPARE(launch.process.exitCode(), 3);
        const auto summary = QJsonDocument::fromJson(readAll(dir + QStringLiteral("/summary.json")).toUtf8()).object();
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        const int steps = summary.value(QStringLiteral("steps")).toInt();
        QVERIFY(steps >= 5);
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/checkpoints/step-%1.pt").arg(steps, 8, 10, QLatin1Char('0'))));
        for (const auto pid : pids) QVERIFY(processGone(pid));
        const QJsonObject event = QJsonDocument::fromJson(readAll(events).toUtf8()).object();
        QCOMPARE(event.value(QStringLiteral("event")).toString(), QStringLiteral("stopped"));
        QVERIFY2(event.value(QStringLiteral("message")).toString().startsWith(QStringLiteral("%1 steps, loss ").arg(steps)),
                 qPrintable(event.value(QStringLiteral("message")).toString()));
        QVERIFY2(launch.output.contains(QStringLiteral("ringmaster-launch: warning: --notify-command %1 %2 (the 'stopped' event) exited with code 5: "
                                                       "mail: no route to host").arg(mailer, events)),
                 qPrintable(launch.output));
    }

    // A crash can leave the newest checkpoint damaged (LibTorch's reader would load flipped bytes
    // silently). Named explicitly, it is bad input at pre-flight and the finished run is untouched;
    // resuming the run directory skips it, says so, and continues from the previous one.
    void damagedCheckpointOnResume()
    {
        QTemporaryDir root;
        LaunchProcess first;
        first.start(baseArguments(root.path()) + QStringList{QStringLiteral("--max-steps"), QStringLiteral("20"),
                                                             QStringLiteral("--checkpoint-every"), QStringLiteral("10")});
        QVERIFY(first.process.waitForFinished(kRunTimeoutMs));
        first.read();
        QCOMPARE(first.process.exitCode(), 0);
        const QString dir = first.runDir();
        const QString newest = dir + QStringLiteral("/checkpoints/step-00000020.pt");
        QFile checkpoint(newest);
        QVERIFY(checkpoint.open(QIODevice::ReadWrite));
        QByteArray bytes = checkpoint.readAll();
        for (qsizetype i = bytes.size() / 2; i < bytes.size() / 2 + 64; ++i) bytes[i] = static_cast<char>(~bytes[i]);
        QVERIFY(checkpoint.seek(0));
        QCOMPARE(checkpoint.write(bytes), bytes.size());
        checkpoint.close();
        const QString summaryBefore = readAll(dir + QStringLiteral("/summary.json"));

        LaunchProcess explicitFile;
        explicitFile.start(QStringList{QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--resume"), newest});
        QVERIFY(explicitFile.process.waitForFinished(60000));
        explicitFile.read();
        QCOMPARE(explicitFile.process.exitCode(), 2);
        QVERIFY2(explicitFile.output.contains(QStringLiteral("damaged checkpoint")) &&
                     explicitFile.output.contains(QStringLiteral("bad CRC")), qPrintable(explicitFile.output));
        QVERIFY2(explicitFile.output.trimmed().count(QLatin1Char('\n')) == 0, qPrintable(explicitFile.output));
        QCOMPARE(readAll(dir + QStringLiteral("/summary.json")), summaryBefore);

        LaunchProcess wholeRun;
        wholeRun.start(QStringList{QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--resume"), dir,
                                   QStringLiteral("--max-steps"), QStringLiteral("25")});
        QVERIFY(wholeRun.process.waitForFinished(kRunTimeoutMs));
        wholeRun.read();
        QCOMPARE(wholeRun.process.exitCode(), 0);
        QVERIFY2(wholeRun.output.contains(QStringLiteral("skipped; resuming from %1/checkpoints/step-00000010.pt").arg(dir)),
                 qPrintable(wholeRun.output));
        const auto summary = QJsonDocument::fromJson(readAll(dir + QStringLiteral("/summary.json")).toUtf8()).object();
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), 25);
        QVERIFY(summary.value(QStringLiteral("resumed_from")).toString().endsWith(QStringLiteral("step-00000010.pt")));
    }

    // --resume RUN_DIR --best continues from the trainer's best checkpoint (--keep-best), a bad --best is one line.
    void resumeFromTheBestCheckpoint()
    {
        QTemporaryDir root;
        const QStringList job{QStringLiteral("--model"), QStringLiteral("linear"), QStringLiteral("--data"), QStringLiteral("synthetic"),
                              QStringLiteral("--synthetic-samples"), QStringLiteral("256"), QStringLiteral("--batch-size"), QStringLiteral("16"),
                              QStringLiteral("--epochs"), QStringLiteral("3"), QStringLiteral("--checkpoint-every"), QStringLiteral("4"),
                              QStringLiteral("--keep-checkpoints"), QStringLiteral("1"), QStringLiteral("--keep-best"), QStringLiteral("val_loss:max")};
        LaunchProcess first;
        first.start(baseArguments(root.path()) + job); // 8 steps an epoch at 2 ranks: evaluations at 8, 16 and 24
        QVERIFY(first.process.waitForFinished(kRunTimeoutMs));
        first.read();
        QCOMPARE(first.process.exitCode(), 0);
        const QString dir = first.runDir();
        const QJsonObject best = QJsonDocument::fromJson(readAll(dir + QStringLiteral("/checkpoints/best.json")).toUtf8()).object();
        const qint64 bestStep = best.value(QStringLiteral("step")).toInteger(-1);
        QVERIFY2(bestStep == 8 || bestStep == 16, qPrintable(readAll(dir + QStringLiteral("/eval.csv"))));

        LaunchProcess resumed;
        resumed.start(QStringList{QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--resume"), dir, QStringLiteral("--best")});
        QVERIFY(resumed.process.waitForFinished(kRunTimeoutMs));
        resumed.read();
        QCOMPARE(resumed.process.exitCode(), 0);
        const QString bestPath = dir + QStringLiteral("/checkpoints/best.pt");
        QVERIFY2(resumed.output.contains(QStringLiteral("resuming from %1").arg(bestPath)), qPrintable(resumed.output));
        const auto summary = QJsonDocument::fromJson(readAll(dir + QStringLiteral("/summary.json")).toUtf8()).object();
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
        QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), 24);
        QCOMPARE(summary.value(QStringLiteral("resumed_from")).toString(), bestPath);
        QCOMPARE(summary.value(QStringLiteral("best_checkpoint")).toObject().value(QStringLiteral("step")).toInteger(), bestStep);

        // A run without a best checkpoint: one line, exit 2, nothing launched.
        QFile::remove(bestPath);
        LaunchProcess none;
        none.start(QStringList{QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--resume"), dir, QStringLiteral("--best")});
        QVERIFY(none.process.waitForFinished(60000));
        none.read();
        QCOMPARE(none.process.exitCode(), 2);
        QVERIFY2(none.output.contains(QStringLiteral("--best: %1 has no best checkpoint").arg(dir)) &&
                     none.output.trimmed().count(QLatin1Char('\n')) == 0,
                 qPrintable(none.output));
    }

    void killedLauncherTakesTheTrainersWithIt()
    {
        QTemporaryDir root;
        LaunchProcess launch;
        // Silent trainers: a SIGPIPE on their next log line must not be what ends them.
        launch.start(baseArguments(root.path()) + QStringList{QStringLiteral("--epochs"), QStringLiteral("20"),
                                                              QStringLiteral("--log-every"), QStringLiteral("1000000")});
        QVERIFY(launch.waitForOutput(QStringLiteral("state: running"), kRunTimeoutMs));
        const QString dir = launch.runDir();
        QVERIFY(QTest::qWaitFor([&] { return trainerPids(dir).size() == 2; }, kRunTimeoutMs));
        const auto pids = trainerPids(dir);
        // While it runs, the runs library says so (the launcher holds the run's lock), and a second launcher
        // cannot resume the same directory: one line naming the holder, exit 2, job.json untouched.
        QCOMPARE(ringmaster::runs::loadRunRecord(dir).status, QStringLiteral("running"));
        const QString jobBefore = readAll(dir + QStringLiteral("/job.json"));
        LaunchProcess second;
        second.start(QStringList{QStringLiteral("--trainer"), trainerPath(), QStringLiteral("--resume"), dir});
        QVERIFY(second.process.waitForFinished(kRunTimeoutMs));
        second.read();
        QCOMPARE(second.process.exitCode(), 2);
        QVERIFY2(second.output.contains(QStringLiteral("is being run right now by pid %1").arg(launch.process.processId())),
                 qPrintable(second.output));
        QCOMPARE(readAll(dir + QStringLiteral("/job.json")), jobBefore);

        QCOMPARE(::kill(static_cast<pid_t>(launch.process.processId()), SIGKILL), 0);
        QVERIFY(launch.process.waitForFinished(10000));
        // PR_SET_PDEATHSIG kills each rank when the launcher dies; failing that, the ranks' reporter
        // warns on the closed socket into a closed stderr and SIGPIPE ends them (measured: removing
        // PDEATHSIG alone does not make this test fail, so it checks the property, not one mechanism).
        QVERIFY(QTest::qWaitFor([&] { return processGone(pids.at(0)) && processGone(pids.at(1)); }, 10000));
        // The run is not left "unknown": its launcher died without a final status.
        const auto listed = ringmaster::runs::listRuns({root.path()});
        QCOMPARE(listed.size(), 1);
        QCOMPARE(listed.first().status, QStringLiteral("interrupted"));
    }
};

QTEST_GUILESS_MAIN(TestLaunchCli)
#include "tst_launch_cli.moc"
