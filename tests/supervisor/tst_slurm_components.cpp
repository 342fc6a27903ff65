// The Slurm submission components (core/supervisor/slurm/): the "launch.slurm" request and its errors,
// the batch script (its lines, `sh -n`, and the whole script run under sh with a fake srun and scontrol,
// which proves the rank contract and the quoting of awkward arguments without Slurm), the client's
// parsing against fake sbatch/squeue/scontrol/scancel/sinfo/sacct stubs, and, where a one-node Slurm
// can be started (scripts/slurm-local.sh: root, slurm-wlm installed), a real 2-task job and a real stop.

#include <csignal>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QHostInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include <functional>
#include <memory>

#include "supervisor/job_spec.h"
#include "supervisor/slurm/batch_script.h"
#include "supervisor/slurm/slurm_client.h"
#include "supervisor/slurm/slurm_request.h"
#include "slurm_fixtures.h"

using namespace ringmaster::supervisor;
using namespace ringmaster::supervisor::slurmtest;

namespace {


SlurmRequest parseRequest(const QByteArray& json)
{
    return SlurmRequest::fromJson(QJsonDocument::fromJson("{\"v\": " + json + "}").object().value(QStringLiteral("v")),
                                  QStringLiteral("job.json"));
}

} // namespace

class TestSlurmComponents : public QObject
{
    Q_OBJECT

private slots:
    void requestRoundTrip();
    void requestErrors_data();
    void requestErrors();
    void timeForms_data();
    void timeForms();
    void jobProblems();
    void trainerScriptLines();
    void scriptJobLinesAndSyntax();
    void scriptJobRunsUnderShWithFakeSrun();
    void clientSubmit();
    void clientStates();
    void clientStopKillPartitions();
    void realSlurmScriptJob();
    void realSlurmStopSignalsTasks();
    void realSlurmTrainerJob();

private:
    // Skips (QSKIP) when no Slurm can be started here; starts scripts/slurm-local.sh once.
};

void TestSlurmComponents::requestRoundTrip()
{
    const QByteArray json = R"({"nodes": 2, "ntasks_per_node": 4, "gpus_per_node": 4, "partition": "gpu",
        "time": "0-02:00:00", "account": "proj42", "extra_args": ["--mem=64G", "--qos=high"], "metrics": "tcp"})";
    const SlurmRequest request = parseRequest(json);
    QVERIFY(request.enabled);
    QCOMPARE(request.nodes, 2);
    QCOMPARE(request.ntasksPerNode, 4);
    QCOMPARE(request.gpusPerNode, 4);
    QCOMPARE(request.partition, QStringLiteral("gpu"));
    QCOMPARE(request.time, QStringLiteral("0-02:00:00"));
    QCOMPARE(request.account, QStringLiteral("proj42"));
    QCOMPARE(request.extraArgs, (QStringList{QStringLiteral("--mem=64G"), QStringLiteral("--qos=high")}));
    QCOMPARE(request.metrics, QStringLiteral("tcp"));
    QCOMPARE(request.toJson(), QJsonDocument::fromJson(json).object());
    QCOMPARE(SlurmRequest::fromJson(request.toJson(), QStringLiteral("again")).toJson(), request.toJson());

    const SlurmRequest absent = SlurmRequest::fromJson(QJsonValue(QJsonValue::Undefined), QStringLiteral("job.json"));
    QVERIFY(!absent.enabled);
    QVERIFY(absent.toJson().isEmpty());
    const SlurmRequest empty = parseRequest("{}");
    QVERIFY(empty.enabled);
    QCOMPARE(empty.nodes, 1);
    QCOMPARE(empty.ntasksPerNode, 0);
    QCOMPARE(empty.metrics, QStringLiteral("auto"));
}

void TestSlurmComponents::requestErrors_data()
{
    QTest::addColumn<QByteArray>("json");
    QTest::addColumn<QString>("expected");
    QTest::newRow("not an object") << QByteArray("3") << "job.json: \"launch.slurm\" must be an object";
    QTest::newRow("unknown key") << QByteArray(R"({"gpus": 2})") << "job.json: unknown key \"launch.slurm.gpus\"";
    QTest::newRow("nodes 0") << QByteArray(R"({"nodes": 0})") << "\"launch.slurm.nodes\" must be an integer from 1 to 4096";
    QTest::newRow("nodes 1.5") << QByteArray(R"({"nodes": 1.5})") << "\"launch.slurm.nodes\" must be an integer";
    QTest::newRow("tasks text") << QByteArray(R"({"ntasks_per_node": "4"})") << "\"launch.slurm.ntasks_per_node\" must be an integer";
    QTest::newRow("gpus -1") << QByteArray(R"({"gpus_per_node": -1})") << "\"launch.slurm.gpus_per_node\" must be an integer from 0";
    QTest::newRow("partition number") << QByteArray(R"({"partition": 5})") << "\"launch.slurm.partition\" must be a string";
    QTest::newRow("partition space") << QByteArray(R"({"partition": "a b"})") << "\"launch.slurm.partition\" \"a b\" is not a Slurm name";
    QTest::newRow("account list") << QByteArray(R"({"account": ["x"]})") << "\"launch.slurm.account\" must be a string";
    QTest::newRow("time words") << QByteArray(R"({"time": "2 hours"})") << "\"launch.slurm.time\" \"2 hours\" is not a Slurm time limit";
    QTest::newRow("time 25 h") << QByteArray(R"({"time": "1-25:00"})") << "\"launch.slurm.time\" \"1-25:00\" is not";
    QTest::newRow("time number") << QByteArray(R"({"time": 60})") << "\"launch.slurm.time\" must be a string";
    QTest::newRow("extra text") << QByteArray(R"({"extra_args": "--mem=1G"})") << "\"launch.slurm.extra_args\" must be a list of strings";
    QTest::newRow("extra number") << QByteArray(R"({"extra_args": ["--mem=1G", 3]})") << "\"launch.slurm.extra_args[1]\" must be a string";
    QTest::newRow("extra spaced") << QByteArray(R"({"extra_args": ["--mem 1G"]})") << "\"launch.slurm.extra_args[0]\" \"--mem 1G\" must be one long sbatch option";
    QTest::newRow("extra short") << QByteArray(R"({"extra_args": ["-p"]})") << "\"launch.slurm.extra_args[0]\" \"-p\" must be one long sbatch option";
    QTest::newRow("extra comment") << QByteArray(R"({"extra_args": ["--comment=a#b"]})") << "must be one long sbatch option";
    QTest::newRow("extra time") << QByteArray(R"({"extra_args": ["--time=5"]})") << "\"--time=5\" is set by Ringmaster: use launch.slurm.time instead";
    QTest::newRow("extra abbreviated") << QByteArray(R"({"extra_args": ["--part=gpu"]})") << "use launch.slurm.partition instead";
    QTest::newRow("metrics word") << QByteArray(R"({"metrics": "socket"})") << "\"launch.slurm.metrics\" \"socket\" is not one of auto, tcp, files";
    QTest::newRow("extra output") << QByteArray(R"({"extra_args": ["--output=x.log"]})") << "\"--output=x.log\" is set by Ringmaster";
}

void TestSlurmComponents::requestErrors()
{
    QFETCH(QByteArray, json);
    QFETCH(QString, expected);
    try {
        parseRequest(json);
        QFAIL("no JobError");
    } catch (const JobError& e) {
        QVERIFY2(e.message().contains(expected), qPrintable(e.message()));
        QVERIFY2(e.message().startsWith(QStringLiteral("job.json: ")), qPrintable(e.message()));
        QVERIFY(!e.message().contains(QLatin1Char('\n')));
    }
}

void TestSlurmComponents::timeForms_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<qint64>("seconds");
    QTest::newRow("minutes") << "30" << qint64(1800);
    QTest::newRow("min:sec") << "30:15" << qint64(1815);
    QTest::newRow("h:min:sec") << "2:00:00" << qint64(7200);
    QTest::newRow("days-hours") << "1-0" << qint64(86400);
    QTest::newRow("days-h:min") << "1-2:30" << qint64(95400);
    QTest::newRow("days-h:min:sec") << "1-02:30:05" << qint64(95405);
    QTest::newRow("zero days") << "0-02:00:00" << qint64(7200);
    QTest::newRow("infinite") << "INFINITE" << kSlurmTimeUnlimited;
    QTest::newRow("unlimited") << "unlimited" << kSlurmTimeUnlimited;
    for (const char* bad : {"", "abc", "1:2:3:4", "-5", "1-24", "5:60", "1:60:00", "1-2:3:60", "1-", "2h"}) {
        QTest::newRow(bad[0] ? bad : "empty") << QString::fromLatin1(bad) << kSlurmTimeInvalid;
    }
}

void TestSlurmComponents::timeForms()
{
    QFETCH(QString, text);
    QFETCH(qint64, seconds);
    QCOMPARE(slurmTimeSeconds(text), seconds);
}

void TestSlurmComponents::jobProblems()
{
    JobSpec job;
    SlurmRequest request;
    QVERIFY(slurmJobProblem(job, request).contains(QStringLiteral("no \"launch.slurm\"")));
    request.enabled = true;
    job.nproc = 3;
    QCOMPARE(slurmJobProblem(job, request), QString());
    QCOMPARE(slurmTasksPerNode(job, request), 3);
    request.gpusPerNode = 2;
    QVERIFY(slurmJobProblem(job, request).contains(QStringLiteral("for a cpu job")));
    job.device = QStringLiteral("cuda");
    QCOMPARE(slurmJobProblem(job, request), QString());
    QCOMPARE(slurmTasksPerNode(job, request), 2); // one task per GPU
    request.ntasksPerNode = 4;
    QVERIFY(slurmJobProblem(job, request).contains(QStringLiteral("\"launch.slurm.ntasks_per_node\" (4) differs")));
    request.ntasksPerNode = 0;
    job.gpus = {0, 1};
    QVERIFY(slurmJobProblem(job, request).contains(QStringLiteral("\"launch.gpus\" picks this machine's GPUs")));
    job.gpus.clear();
    request.gpusPerNode = 0;
    QVERIFY(slurmJobProblem(job, request).contains(QStringLiteral("\"launch.slurm.gpus_per_node\" is 0 for a cuda job")));
}

void TestSlurmComponents::trainerScriptLines()
{
    BatchScriptInput input;
    input.job.device = QStringLiteral("cuda");
    input.request = parseRequest(R"({"nodes": 2, "gpus_per_node": 4, "partition": "gpu", "time": "0-02:00:00",
                                     "account": "proj42", "extra_args": ["--mem=64G"]})");
    input.runDir = QStringLiteral("/shared/runs/2026 #1");
    input.jobFile = input.runDir + QStringLiteral("/job.json");
    input.trainerPath = QStringLiteral("/opt/rm/bin/ringmaster-trainer");
    QCOMPARE(slurmJobProblem(input.job, input.request), QString());
    const QString text = batchScriptText(input);
    const QStringList lines = text.split(QLatin1Char('\n'));
    QCOMPARE(lines.first(), QStringLiteral("#!/bin/sh"));
    // sbatch reads #SBATCH lines only before the first command: every one of them comes before it.
    const int firstCommand = static_cast<int>(std::find_if(lines.begin() + 1, lines.end(), [](const QString& l) {
                                                  return !l.isEmpty() && !l.startsWith(QLatin1Char('#'));
                                              }) - lines.begin());
    const QStringList expected{
        QStringLiteral("#SBATCH --job-name=\"ringmaster-2026 \\#1\""),
        QStringLiteral("#SBATCH --chdir=\"/shared/runs/2026 \\#1\""),
        QStringLiteral("#SBATCH --output=slurm/batch-%j.log"),
        QStringLiteral("#SBATCH --nodes=2"),
        QStringLiteral("#SBATCH --ntasks-per-node=4"),
        QStringLiteral("#SBATCH --gpus-per-node=4"),
        QStringLiteral("#SBATCH --partition=gpu"),
        QStringLiteral("#SBATCH --time=0-02:00:00"),
        QStringLiteral("#SBATCH --account=proj42"),
        QStringLiteral("#SBATCH --mem=64G")};
    for (const QString& line : expected) {
        const int at = static_cast<int>(lines.indexOf(line));
        QVERIFY2(at > 0 && at < firstCommand, qPrintable(line + QStringLiteral(" missing or after a command in:\n") + text));
    }
    QVERIFY2(text.contains(QStringLiteral("srun --nodes=2 --ntasks=8 --ntasks-per-node=4 ")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("--kill-on-bad-exit=1 --output=logs/rank-%t.log")));
    QVERIFY2(lines.contains(QStringLiteral("  '/opt/rm/bin/ringmaster-trainer' '--job' '/shared/runs/2026 #1/job.json' "
                                           "'--out' '/shared/runs/2026 #1' '--device' 'cuda' \"$@\"")),
             qPrintable(text));
    // A requeued job (SLURM_RESTART_COUNT > 0) resumes from the run's newest checkpoint; a fresh one passes nothing.
    QVERIFY2(lines.contains(QStringLiteral("set -- ")), qPrintable(text));
    QVERIFY(lines.contains(QStringLiteral("  set -- --resume \"$RUN_DIR\"")));
    QVERIFY(lines.contains(QStringLiteral("RUN_DIR='/shared/runs/2026 #1'")));
    QVERIFY(text.contains(QStringLiteral("\nunset RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT ")));
    QVERIFY2(!text.contains(QStringLiteral("TASK_CONTRACT")), "the trainer reads Slurm's variables itself");
    // A CUDA job's ranks get PyTorch's NCCL flight recorder, dumping into the run directory, unless already set.
    for (const char* name : {"TORCH_FR_DUMP_TEMP_FILE", "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"}) {
        QVERIFY2(lines.contains(QStringLiteral("export %1=\"${%1-$RUN_DIR/logs/nccl-trace-rank-}\"").arg(QLatin1String(name))), qPrintable(text));
    }
    QVERIFY(lines.contains(QStringLiteral("export TORCH_NCCL_DUMP_ON_TIMEOUT=\"${TORCH_NCCL_DUMP_ON_TIMEOUT-1}\"")));

    QTemporaryDir dir;
    const QString path = writeFile(dir.filePath(QStringLiteral("t.sbatch")), text.toUtf8());
    const Ran syntax = runProgram(QStringLiteral("/bin/sh"), {QStringLiteral("-n"), path});
    QVERIFY2(syntax.exitCode == 0, qPrintable(syntax.output));
}

void TestSlurmComponents::scriptJobLinesAndSyntax()
{
    QTemporaryDir dir;
    const QString runDir = dir.filePath(QStringLiteral("run dir 'q'"));
    BatchScriptInput input = scriptInput(runDir, runDir + QStringLiteral("/train me.py"), kAwkwardArguments);
    QString error;
    const QString path = writeBatchScript(input, &error);
    QVERIFY2(!path.isEmpty(), qPrintable(error));
    QCOMPARE(path, runDir + QStringLiteral("/slurm/job.sbatch"));
    QVERIFY(QFileInfo(path).isExecutable());
    const QString text = readAll(path);
    QCOMPARE(text, batchScriptText(input));
    for (const QString& line : {QStringLiteral("MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)"),
                                QStringLiteral("MASTER_PORT=$((15000 + SLURM_JOB_ID % 17000))"),
                                QStringLiteral("export MASTER_ADDR MASTER_PORT"),
                                QStringLiteral("export RINGMASTER_RUN_DIR=\"$RUN_DIR\" PYTHONUNBUFFERED=1"),
                                QStringLiteral("#SBATCH --time=5"),
                                QStringLiteral("  /bin/sh -c \"$TASK_CONTRACT\" \\")}) {
        QVERIFY2(text.split(QLatin1Char('\n')).contains(line), qPrintable(line + QStringLiteral(" not in:\n") + text));
    }
    const Ran syntax = runProgram(QStringLiteral("/bin/sh"), {QStringLiteral("-n"), path});
    QVERIFY2(syntax.exitCode == 0, qPrintable(syntax.output + text));

    // A run directory that cannot be created: one line, nothing written.
    const QString blocker = writeFile(dir.filePath(QStringLiteral("file")), "x");
    input.runDir = blocker + QStringLiteral("/run");
    QVERIFY(writeBatchScript(input, &error).isEmpty());
    QVERIFY2(error.startsWith(QStringLiteral("cannot create ")) && !error.contains(QLatin1Char('\n')), qPrintable(error));
}

// The whole generated script under sh, with srun and scontrol faked: each task gets torchrun's contract
// from Slurm's variables, the arguments arrive byte for byte, launcher variables of the submitter are gone.
void TestSlurmComponents::scriptJobRunsUnderShWithFakeSrun()
{
    QTemporaryDir dir;
    const QString bin = dir.filePath(QStringLiteral("bin"));
    writeFile(bin + QStringLiteral("/srun"), kFakeSrun, true);
    writeFile(bin + QStringLiteral("/scontrol"), kFakeScontrol, true);
    const QString runDir = dir.filePath(QStringLiteral("run dir 'q' $x"));
    const QString script = writeFile(runDir + QStringLiteral("/dump me.py"), kContractDump);
    QString error;
    const QString path = writeBatchScript(scriptInput(runDir, script, kAwkwardArguments), &error);
    QVERIFY2(!path.isEmpty(), qPrintable(error));

    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("PATH"), bin + QLatin1Char(':') + env.value(QStringLiteral("PATH")));
    env.insert(QStringLiteral("SLURM_JOB_ID"), QStringLiteral("12345"));
    env.insert(QStringLiteral("SLURM_JOB_NODELIST"), QStringLiteral("fakenode[7-8]"));
    // What a submitter launched by another launcher would pass along: must not reach the tasks.
    env.insert(QStringLiteral("RANK"), QStringLiteral("99"));
    env.insert(QStringLiteral("RINGMASTER_TOKEN"), QStringLiteral("secret"));
    env.remove(QStringLiteral("OMP_NUM_THREADS"));
    env.remove(QStringLiteral("SLURM_CPUS_PER_TASK"));
    const Ran ran = runProgram(QStringLiteral("/bin/sh"), {path}, 60000, env);
    QVERIFY2(ran.exitCode == 0, qPrintable(ran.output + readAll(runDir + QStringLiteral("/logs/rank-0.log"))));

    for (int rank = 0; rank < 2; ++rank) {
        const QJsonObject record = readJson(runDir + QStringLiteral("/contract-%1.json").arg(rank));
        QVERIFY2(!record.isEmpty(), qPrintable(readAll(runDir + QStringLiteral("/logs/rank-%1.log").arg(rank))));
        QStringList argv;
        for (const auto& value : record.value(QStringLiteral("argv")).toArray()) argv.append(value.toString());
        QCOMPARE(argv, kAwkwardArguments);
        QCOMPARE(record.value(QStringLiteral("cwd")).toString(), runDir);
        const QJsonObject e = record.value(QStringLiteral("env")).toObject();
        const QString r = QString::number(rank);
        const QList<QPair<const char*, QString>> wanted{
            {"RANK", r}, {"LOCAL_RANK", r}, {"WORLD_SIZE", QStringLiteral("2")}, {"LOCAL_WORLD_SIZE", QStringLiteral("2")},
            {"MASTER_ADDR", QStringLiteral("fakenode7")}, {"MASTER_PORT", QString::number(15000 + 12345 % 17000)},
            {"GROUP_RANK", QStringLiteral("0")}, {"GROUP_WORLD_SIZE", QStringLiteral("1")}, {"ROLE_NAME", QStringLiteral("default")},
            {"ROLE_RANK", r}, {"ROLE_WORLD_SIZE", QStringLiteral("2")}, {"TORCHELASTIC_RESTART_COUNT", QStringLiteral("0")},
            {"TORCHELASTIC_MAX_RESTARTS", QStringLiteral("3")}, {"TORCHELASTIC_RUN_ID", QFileInfo(runDir).fileName()},
            {"RINGMASTER_RUN_DIR", runDir}, {"PYTHONUNBUFFERED", QStringLiteral("1")}, {"OMP_NUM_THREADS", QStringLiteral("1")},
            {"TORCHELASTIC_ERROR_FILE", runDir + QStringLiteral("/logs/error-rank-%1.json").arg(r)},
            {"TORCH_NCCL_ASYNC_ERROR_HANDLING", QStringLiteral("1")},
            {"TORCHELASTIC_SIGNALS_TO_HANDLE", QStringLiteral("SIGTERM,SIGINT,SIGHUP,SIGQUIT")}, {"ACCELERATE_USE_CPU", QStringLiteral("true")},
            {"RINGMASTER_STACKS_FILE", runDir + QStringLiteral("/logs/rank-%1.stacks.txt").arg(r)},
            {"RINGMASTER_STACKS_SIGNAL", QString::number(SIGRTMIN + 2)}};
        for (const auto& [name, value] : wanted) {
            QVERIFY2(e.value(QLatin1String(name)).toString() == value,
                     qPrintable(QStringLiteral("rank %1: %2=%3, expected %4").arg(r, QLatin1String(name), e.value(QLatin1String(name)).toString(), value)));
        }
        QVERIFY(e.value(QStringLiteral("PYTHONPATH")).toString().startsWith(QStringLiteral("/opt/ringmaster helper")));
        QVERIFY2(e.value(QStringLiteral("RINGMASTER_TOKEN")).isNull(), "the submitter's socket token leaked into a task");
        QVERIFY(readAll(runDir + QStringLiteral("/logs/rank-%1.log").arg(rank)).contains(QStringLiteral("rank %1 of 2 at fakenode7:27345").arg(rank)));
    }
}

void TestSlurmComponents::clientSubmit()
{
    Stubs stubs;
    stubs.answer("sbatch", "12345\n");
    SlurmSubmission submitted = stubs.client().submit(QStringLiteral("/runs/a b/slurm/job.sbatch"));
    QCOMPARE(submitted.error, QString());
    QCOMPARE(submitted.jobId, QStringLiteral("12345"));
    QCOMPARE(stubs.args("sbatch"), QStringLiteral("--parsable /runs/a b/slurm/job.sbatch\n"));

    stubs.answer("sbatch", "777;clusterA\n");
    submitted = stubs.client().submit(QStringLiteral("x"));
    QCOMPARE(submitted.jobId, QStringLiteral("777"));
    QCOMPARE(submitted.cluster, QStringLiteral("clusterA"));

    stubs.answer("sbatch", "", "sbatch: error: invalid partition specified: nope\n"
                               "sbatch: error: Batch job submission failed: Invalid partition name specified\n", 1);
    submitted = stubs.client().submit(QStringLiteral("x"));
    QVERIFY(submitted.jobId.isEmpty());
    QCOMPARE(submitted.error, QStringLiteral("sbatch failed: invalid partition specified: nope; "
                                             "Batch job submission failed: Invalid partition name specified"));

    stubs.answer("sbatch", "Submitted batch job 5\n");
    submitted = stubs.client().submit(QStringLiteral("x"));
    QVERIFY(submitted.jobId.isEmpty());
    QVERIFY2(submitted.error.startsWith(QStringLiteral("sbatch printed no job id")), qPrintable(submitted.error));

    SlurmCommands missing = SlurmCommands::inFolder(stubs.path() + QStringLiteral("/nowhere"));
    submitted = SlurmClient(missing).submit(QStringLiteral("x"));
    QVERIFY2(submitted.error.contains(QStringLiteral("could not be started")), qPrintable(submitted.error));

    writeFile(stubs.path() + QStringLiteral("/sbatch.sleep"), "5");
    QElapsedTimer timer;
    timer.start();
    submitted = stubs.client(500).submit(QStringLiteral("x"));
    QVERIFY2(submitted.error.contains(QStringLiteral("did not answer within 0.5 s")), qPrintable(submitted.error));
    QVERIFY(timer.elapsed() < 4000);
}

void TestSlurmComponents::clientStates()
{
    Stubs stubs;
    stubs.answer("squeue", "PENDING|Resources\n");
    SlurmJobStatus status = stubs.client().state(QStringLiteral("42"));
    QCOMPARE(status.state, SlurmJobState::Pending);
    QCOMPARE(status.reason, QStringLiteral("Resources"));
    QVERIFY(!status.isFinal());
    QCOMPARE(stubs.args("squeue"), QStringLiteral("-h -j 42 -o %T|%r\n"));
    QVERIFY2(stubs.args("scontrol").isEmpty(), "a queued job needs no scontrol");

    stubs.answer("squeue", "RUNNING|None\n");
    QCOMPARE(stubs.client().state(QStringLiteral("42")).state, SlurmJobState::Running);
    stubs.answer("squeue", "COMPLETING|None\n");
    QCOMPARE(stubs.client().state(QStringLiteral("42")).state, SlurmJobState::Completing);

    // Left the queue: scontrol still has it, with its exit code.
    stubs.answer("squeue", "");
    stubs.answer("scontrol", "JobId=42 JobName=ringmaster-x\n   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n"
                             "   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0\n");
    status = stubs.client().state(QStringLiteral("42"));
    QCOMPARE(status.state, SlurmJobState::Failed);
    QCOMPARE(status.reason, QStringLiteral("NonZeroExitCode"));
    QCOMPARE(status.exitCode, 3);
    QCOMPARE(status.exitSignal, 0);
    QVERIFY(status.isFinal());
    stubs.answer("squeue", "", kInvalidJob, 1);
    stubs.answer("scontrol", "JobId=42\n   JobState=COMPLETED Reason=None Dependency=(null)\n   ExitCode=0:0\n");
    status = stubs.client().state(QStringLiteral("42"));
    QCOMPARE(status.state, SlurmJobState::Completed);
    QCOMPARE(status.exitCode, 0);

    // Unknown everywhere, accounting disabled: gone.
    stubs.answer("scontrol", "", kInvalidJob, 1);
    stubs.answer("sacct", "", "Slurm accounting storage is disabled\n", 1);
    status = stubs.client().state(QStringLiteral("42"));
    QCOMPARE(status.state, SlurmJobState::Gone);
    QVERIFY(status.isFinal());
    QCOMPARE(stubs.args("sacct"), QStringLiteral("-n -X -P -j 42 -o State,ExitCode,Reason\n"));
    // Accounting remembers it.
    stubs.answer("sacct", "CANCELLED by 0|0:15|None\n");
    status = stubs.client().state(QStringLiteral("42"));
    QCOMPARE(status.state, SlurmJobState::Cancelled);
    QCOMPARE(status.exitSignal, 15);

    // The controller cannot be reached: unknown, with Slurm's message, never "gone".
    stubs.answer("squeue", "", "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n", 1);
    status = stubs.client().state(QStringLiteral("42"));
    QCOMPARE(status.state, SlurmJobState::Unknown);
    QVERIFY(!status.isFinal());
    QVERIFY2(status.error.contains(QStringLiteral("Unable to contact slurm controller")), qPrintable(status.error));

    // Not a job id: refused before any tool runs (`scontrol show job ""` would list every job).
    const QString before = stubs.args("squeue") + stubs.args("scontrol");
    status = stubs.client().state(QString());
    QCOMPARE(status.state, SlurmJobState::Unknown);
    QVERIFY2(status.error.contains(QStringLiteral("is not a Slurm job id")), qPrintable(status.error));
    QVERIFY(stubs.client().kill(QStringLiteral("42; rm -rf /")).contains(QStringLiteral("is not a Slurm job id")));
    QCOMPARE(stubs.args("squeue") + stubs.args("scontrol"), before);

    QCOMPARE(SlurmClient::stateFromText(QStringLiteral("TIMEOUT")), SlurmJobState::Timeout);
    QCOMPARE(SlurmClient::stateFromText(QStringLiteral("NODE_FAIL")), SlurmJobState::NodeFail);
    QCOMPARE(SlurmClient::stateFromText(QStringLiteral("OUT_OF_MEMORY")), SlurmJobState::OutOfMemory);
    QCOMPARE(SlurmClient::stateFromText(QStringLiteral("SUSPENDED")), SlurmJobState::Other);
}

void TestSlurmComponents::clientStopKillPartitions()
{
    Stubs stubs;
    QCOMPARE(stubs.client().stop(QStringLiteral("42")), QString());
    QCOMPARE(stubs.client().kill(QStringLiteral("42")), QString());
    QCOMPARE(stubs.args("scancel"), QStringLiteral("--signal=TERM 42\n42\n"));
    stubs.answer("scancel", "", "scancel: error: Kill job error on job id 42: Job can not be altered now, try again later\n", 1);
    QCOMPARE(stubs.client().stop(QStringLiteral("42")),
             QStringLiteral("scancel --signal=TERM 42 failed: Kill job error on job id 42: Job can not be altered now, try again later"));

    stubs.answer("sinfo", "debug*|up|infinite|0/1/0/1|(null)\n"
                          "gpu|up|1-00:00:00|1/2/0/3|gpu:a100:4(S:0-1)\n"
                          "gpu|up|1-00:00:00|0/1/0/1|gpu:a100:8\n"
                          "old|down|30:00|0/0/2/2|(null)\n");
    const SlurmPartitions listed = stubs.client().partitions();
    QCOMPARE(listed.error, QString());
    // The partitions, then the nodes' GPUs in use (here the stub answers the same lines, which are not
    // per-node lines: the free GPUs stay unknown).
    QCOMPARE(stubs.args("sinfo"), QStringLiteral("-h -o %P|%a|%l|%F|%G\n-h -N -O PartitionName:0|,StateCompact:0|,Gres:0|,GresUsed:0\n"));
    for (const SlurmPartition& partition : listed.partitions) QCOMPARE(partition.gpusFree, -1);
    QCOMPARE(listed.partitions.size(), 3);
    const SlurmPartition& debug = listed.partitions.at(0);
    QCOMPARE(debug.name, QStringLiteral("debug"));
    QVERIFY(debug.isDefault && debug.available);
    QCOMPARE(debug.timeLimit, QStringLiteral("infinite"));
    QCOMPARE(debug.nodesIdle, 1);
    QCOMPARE(debug.nodesTotal, 1);
    QCOMPARE(debug.gpusPerNode, 0);
    QVERIFY(debug.gres.isEmpty());
    const SlurmPartition& gpu = listed.partitions.at(1);
    QVERIFY(!gpu.isDefault);
    QCOMPARE(gpu.nodesIdle, 3);
    QCOMPARE(gpu.nodesTotal, 4);
    QCOMPARE(gpu.gpusPerNode, 8);
    QCOMPARE(gpu.gres, QStringLiteral("gpu:a100:4(S:0-1),gpu:a100:8"));
    QVERIFY(!listed.partitions.at(2).available);

    // Free GPUs: each idle or mixed node's GPUs less those in use; allocated, drained and down nodes add none.
    writeFile(stubs.path() + QStringLiteral("/sinfo.nodes.out"),
              "debug|idle|(null)|(null)\n"
              "gpu|mix|gpu:a100:4(S:0-1)|gpu:a100:1(IDX:0)\n"
              "gpu|idle~|gpu:a100:4(S:0-1)|gpu:a100:0(IDX:N/A)\n"
              "gpu|alloc|gpu:a100:4(S:0-1)|gpu:a100:2(IDX:0,2)\n"
              "gpu|drain*|gpu:a100:8|gpu:a100:0(IDX:N/A)\n"
              "old|down*|(null)|(null)\n");
    const SlurmPartitions withUse = stubs.client().partitions();
    QCOMPARE(withUse.partitions.at(0).gpusFree, 0);
    QCOMPARE(withUse.partitions.at(1).gpusFree, 7);
    QCOMPARE(withUse.partitions.at(2).gpusFree, 0);
    SlurmPartitions unchanged = withUse;
    QVERIFY(!SlurmClient::parseGpuUse(QStringLiteral("gpu|idle|gpu:4\n"), &unchanged));   // not four fields
    QCOMPARE(unchanged.partitions.at(1).gpusFree, 7);
    QVERIFY(SlurmClient::parseGpuUse(QStringLiteral("gpu|mixed|gpu:2,gpu:v100:2|gpu:1(IDX:0),gpu:v100:0\n"), &unchanged));
    QCOMPARE(unchanged.partitions.at(1).gpusFree, 3);
    QCOMPARE(unchanged.partitions.at(0).gpusFree, 0);   // not listed this time: what it had
    QFile::remove(stubs.path() + QStringLiteral("/sinfo.nodes.out"));
    stubs.answer("sinfo", "", "sinfo: error: Unable to contact slurm controller (connect failure)\n", 1);
    QCOMPARE(stubs.client().partitions().error, QStringLiteral("sinfo: Unable to contact slurm controller (connect failure)"));

    // The controller's hosts (where the TCP metrics endpoint looks for the compute nodes' network).
    QCOMPARE(SlurmClient::parseControllerHosts(QStringLiteral("ClusterName             = c\nSlurmctldHost[0]        = ctl1(10.1.2.3)\n"
                                                              "SlurmctldHost[1]        = ctl2\nSlurmctldPort           = 6817\n")),
             (QStringList{QStringLiteral("10.1.2.3"), QStringLiteral("ctl2")}));
    stubs.answer("scontrol", "SlurmctldHost[0]        = vm\n");
    QCOMPARE(stubs.client().controllerHosts(), QStringList{QStringLiteral("vm")});
    stubs.answer("scontrol", "", "scontrol: error: Unable to contact slurm controller\n", 1);
    QVERIFY(stubs.client().controllerHosts().isEmpty());

    // A command on one node of a running job (a hung rank's gdb): one more step beside the tasks, never a shell.
    QCOMPARE(stubs.client().commandOnNode(QStringLiteral("42"), QStringLiteral("node-7")),
             (QStringList{stubs.path() + QStringLiteral("/srun"), QStringLiteral("--jobid=42"), QStringLiteral("--overlap"),
                          QStringLiteral("--nodes=1"), QStringLiteral("--ntasks=1"), QStringLiteral("--nodelist=node-7"),
                          QStringLiteral("--quiet")}));
    QVERIFY(stubs.client().commandOnNode(QStringLiteral("42; true"), QStringLiteral("node-7")).isEmpty());
    QVERIFY(stubs.client().commandOnNode(QStringLiteral("42"), QStringLiteral("--uid=0")).isEmpty());
    QVERIFY(stubs.client().commandOnNode(QStringLiteral("42"), QString()).isEmpty());
}

#define REQUIRE_SLURM() REQUIRE_SLURM_FOR("supervisor.tst_slurm_components.real")

void TestSlurmComponents::realSlurmScriptJob()
{
    REQUIRE_SLURM();
    QTemporaryDir dir;
    const QString runDir = dir.filePath(QStringLiteral("run 'one' #1"));
    const QString script = writeFile(runDir + QStringLiteral("/contract.py"), kContractDump);
    BatchScriptInput input = scriptInput(runDir, script, kAwkwardArguments);
    input.helperDir.clear();
    QString error;
    const QString path = writeBatchScript(input, &error);
    QVERIFY2(!path.isEmpty(), qPrintable(error));

    QElapsedTimer timer;
    timer.start();
    JobGuard guard{SlurmClient(), {}};
    const SlurmSubmission submitted = guard.client.submit(path);
    QVERIFY2(submitted.error.isEmpty(), qPrintable(submitted.error));
    guard.jobId = submitted.jobId;
    SlurmJobStatus status;
    QVERIFY2(waitFinal(guard.client, submitted.jobId, &status), qPrintable(status.stateText + status.error));
    qInfo("2-task script job %s: submitted to %s in %lld ms", qPrintable(submitted.jobId), qPrintable(status.stateText),
          static_cast<long long>(timer.elapsed()));
    const QString batchLog = readAll(runDir + QStringLiteral("/slurm/batch-%1.log").arg(submitted.jobId));
    QVERIFY2(status.state == SlurmJobState::Completed && status.exitCode == 0,
             qPrintable(status.stateText + QLatin1Char(' ') + QString::number(status.exitCode) + QLatin1Char('\n') + batchLog +
                        readAll(runDir + QStringLiteral("/logs/rank-0.log"))));

    const QString host = QHostInfo::localHostName().section(QLatin1Char('.'), 0, 0);
    const QString port = QString::number(15000 + submitted.jobId.toLongLong() % 17000);
    for (int rank = 0; rank < 2; ++rank) {
        const QJsonObject record = readJson(runDir + QStringLiteral("/contract-%1.json").arg(rank));
        const QJsonObject e = record.value(QStringLiteral("env")).toObject();
        QCOMPARE(e.value(QStringLiteral("RANK")).toString(), QString::number(rank));
        QCOMPARE(e.value(QStringLiteral("WORLD_SIZE")).toString(), QStringLiteral("2"));
        QCOMPARE(e.value(QStringLiteral("MASTER_ADDR")).toString(), host);
        QCOMPARE(e.value(QStringLiteral("MASTER_PORT")).toString(), port);
        QStringList argv;
        for (const auto& value : record.value(QStringLiteral("argv")).toArray()) argv.append(value.toString());
        QCOMPARE(argv, kAwkwardArguments);
        const QString log = readAll(runDir + QStringLiteral("/logs/rank-%1.log").arg(rank));
        QVERIFY2(log.contains(QStringLiteral("rank %1 of 2 at %2:%3").arg(rank).arg(host, port)), qPrintable(log));
    }
    QCOMPARE(queueLine(submitted.jobId), QString());
}

// stop(): SIGTERM reaches every task (each traps it and writes a file), the job ends by itself with the
// tasks' exit code, and nothing is left in the queue.
void TestSlurmComponents::realSlurmStopSignalsTasks()
{
    REQUIRE_SLURM();
    QTemporaryDir dir;
    const QString runDir = dir.filePath(QStringLiteral("stop run"));
    const QString script = writeFile(runDir + QStringLiteral("/sleeper.py"), R"PY(import os, signal, sys, time
run_dir, rank = os.environ["RINGMASTER_RUN_DIR"], os.environ["RANK"]
def on_term(signum, frame):
    open(os.path.join(run_dir, "term-" + rank), "w").write("SIGTERM\n")
    sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
open(os.path.join(run_dir, "ready-" + rank), "w").write("ready\n")
print("rank", rank, "waiting for SIGTERM")
time.sleep(120)
sys.exit(1)
)PY");
    QString error;
    const QString path = writeBatchScript(scriptInput(runDir, script, {}), &error);
    QVERIFY2(!path.isEmpty(), qPrintable(error));

    JobGuard guard{SlurmClient(), {}};
    const SlurmSubmission submitted = guard.client.submit(path);
    QVERIFY2(submitted.error.isEmpty(), qPrintable(submitted.error));
    guard.jobId = submitted.jobId;
    const auto ready = [&] {
        return QFile::exists(runDir + QStringLiteral("/ready-0")) && QFile::exists(runDir + QStringLiteral("/ready-1"));
    };
    QVERIFY2(pollUntil(ready, kJobDeadlineMs), qPrintable(guard.client.state(submitted.jobId).stateText));
    QCOMPARE(guard.client.state(submitted.jobId).state, SlurmJobState::Running);

    QElapsedTimer timer;
    timer.start();
    QCOMPARE(guard.client.stop(submitted.jobId), QString());
    SlurmJobStatus status;
    QVERIFY2(waitFinal(guard.client, submitted.jobId, &status), qPrintable(status.stateText + status.error));
    qInfo("stop -> %s in %lld ms", qPrintable(status.stateText), static_cast<long long>(timer.elapsed()));
    QVERIFY2(QFile::exists(runDir + QStringLiteral("/term-0")) && QFile::exists(runDir + QStringLiteral("/term-1")),
             qPrintable(readAll(runDir + QStringLiteral("/logs/rank-0.log")) + readAll(runDir + QStringLiteral("/logs/rank-1.log"))));
    // Ended through the tasks' own handlers (exit 0), not cancelled by Slurm.
    QVERIFY2(status.state == SlurmJobState::Completed && status.exitCode == 0,
             qPrintable(status.stateText + QLatin1Char(' ') + QString::number(status.exitCode)));
    QCOMPARE(queueLine(submitted.jobId), QString());
}

// The built-in trainer's batch script: two ringmaster-trainer ranks under one srun step find each other
// from Slurm's variables alone and complete a short run.
void TestSlurmComponents::realSlurmTrainerJob()
{
    REQUIRE_SLURM();
    const QString trainer = qEnvironmentVariable("RINGMASTER_TRAINER");
    if (!QFileInfo(trainer).isExecutable()) QSKIP("RINGMASTER_TRAINER does not name ringmaster-trainer (ctest sets it)");
    QTemporaryDir dir;
    BatchScriptInput input;
    input.job.nproc = 2;
    for (const auto& [flag, value] : QList<QPair<QString, QJsonValue>>{
             {QStringLiteral("model"), QStringLiteral("linear")}, {QStringLiteral("data"), QStringLiteral("synthetic")},
             {QStringLiteral("synthetic_samples"), 512}, {QStringLiteral("batch_size"), 32}, {QStringLiteral("epochs"), 1},
             {QStringLiteral("threads"), 1}, {QStringLiteral("data_cache"), QStringLiteral("off")}}) {
        input.job.setTrainerOption(flag, value);
    }
    input.request.enabled = true;
    input.request.time = QStringLiteral("5");
    input.runDir = dir.filePath(QStringLiteral("trainer run"));
    input.jobFile = input.runDir + QStringLiteral("/job.json");
    input.trainerPath = trainer;
    QVERIFY(QDir().mkpath(input.runDir));
    input.job.save(input.jobFile);
    QString error;
    const QString path = writeBatchScript(input, &error);
    QVERIFY2(!path.isEmpty(), qPrintable(error));

    QElapsedTimer timer;
    timer.start();
    JobGuard guard{SlurmClient(), {}};
    const SlurmSubmission submitted = guard.client.submit(path);
    QVERIFY2(submitted.error.isEmpty(), qPrintable(submitted.error));
    guard.jobId = submitted.jobId;
    SlurmJobStatus status;
    QVERIFY2(waitFinal(guard.client, submitted.jobId, &status), qPrintable(status.stateText + status.error));
    qInfo("2-rank trainer job %s: submitted to %s in %lld ms", qPrintable(submitted.jobId), qPrintable(status.stateText),
          static_cast<long long>(timer.elapsed()));
    const QString log0 = readAll(input.runDir + QStringLiteral("/logs/rank-0.log"));
    QVERIFY2(status.state == SlurmJobState::Completed && status.exitCode == 0, qPrintable(status.stateText + QLatin1Char('\n') + log0));
    const QJsonObject summary = readJson(input.runDir + QStringLiteral("/summary.json"));
    QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("completed"));
    QCOMPARE(summary.value(QStringLiteral("world_size")).toInt(), 2);
    // The job file's flags reached every rank: 512 samples / (2 ranks x 32) = 8 steps of the linear model.
    QCOMPARE(summary.value(QStringLiteral("model")).toString(), QStringLiteral("linear"));
    QCOMPARE(summary.value(QStringLiteral("train_samples")).toInt(), 512);
    QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), 8);
    const QString port = QString::number(15000 + submitted.jobId.toLongLong() % 17000);
    QVERIFY2(log0.contains(QStringLiteral("MASTER_PORT %1 = 15000 + SLURM_JOB_ID % 17000").arg(port)), qPrintable(log0));
    QVERIFY(readAll(input.runDir + QStringLiteral("/logs/rank-1.log")).contains(QStringLiteral("rank 1/2")));
    QCOMPARE(queueLine(submitted.jobId), QString());
}

QTEST_GUILESS_MAIN(TestSlurmComponents)
#include "tst_slurm_components.moc"
