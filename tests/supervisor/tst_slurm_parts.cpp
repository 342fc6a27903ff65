// The Slurm backend's parts that need no Slurm (core/supervisor/slurm/), from stub inputs: srun's task
// error lines (task_failures.h), the failure verdict of a Slurm run (slurm_verdict.h: a failed task named
// with its exit code or signal, collateral tasks not blamed, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, CANCELLED
// and FAILED with the batch script's exit code, each with srun's terminated tasks as consequences), the
// TCP endpoint's address (reachable_address.h: RINGMASTER_LISTEN_ADDRESS, the route towards slurmctld from
// a stub scontrol, the fallbacks), commands.json of a Slurm run (slurm_launch_record.h) and the
// `ringmaster-launch --attach` line a run left running prints.

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkInterface>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <vector>

#include "supervisor/failure_verdict.h"
#include "supervisor/slurm/slurm_launch_record.h"
#include "supervisor/slurm/reachable_address.h"
#include "supervisor/slurm/slurm_run.h"
#include "supervisor/slurm/slurm_verdict.h"
#include "supervisor/slurm/task_failures.h"
#include "slurm_fixtures.h"

using namespace ringmaster::supervisor;

namespace {

SlurmJobStatus ended(SlurmJobState state, const char* text, int exitCode = 0, int exitSignal = 0)
{
    SlurmJobStatus status;
    status.state = state;
    status.stateText = QString::fromLatin1(text);
    status.exitCode = exitCode;
    status.exitSignal = exitSignal;
    return status;
}

RootCause judge(const SlurmJobStatus& status, const QStringList& batchLines, const std::vector<QStringList>& rankLines,
                bool script = false)
{
    SlurmEnd end;
    end.status = status;
    end.jobId = QStringLiteral("57");
    end.batchLogPath = QStringLiteral("/runs/r/slurm/batch-57.log");
    end.batchLines = batchLines;
    end.rankLines = &rankLines;
    end.script = script;
    FailureVerdict verdict;
    judgeSlurmFailure(end, &verdict);
    return verdict.rootCause();
}

// What srun and slurmstepd print in the batch log when Slurm ends a 2-task job at its time limit.
const QStringList kTimeLimitLog{
    QStringLiteral("slurmstepd: error: *** JOB 57 ON node07 CANCELLED AT 2026-12-01T10:00:00 DUE TO TIME LIMIT ***"),
    QStringLiteral("srun: Job step aborted: Waiting up to 32 seconds for job step to finish."),
    QStringLiteral("slurmstepd: error: *** STEP 57.0 ON node07 CANCELLED AT 2026-12-01T10:00:00 DUE TO TIME LIMIT ***"),
    QStringLiteral("srun: error: node07: tasks 0-1: Terminated"),
    QStringLiteral("srun: Force Terminated StepId=57.0")};

// Puts NAME=VALUE in the environment (or removes it) for as long as it lives.
struct ScopedEnv
{
    QByteArray name;
    QByteArray saved;
    bool had;
    ScopedEnv(const char* n, const QByteArray& value) : name(n), saved(qgetenv(n)), had(qEnvironmentVariableIsSet(n))
    {
        if (value.isNull()) qunsetenv(n);
        else qputenv(n, value);
    }
    ~ScopedEnv()
    {
        if (had) qputenv(name.constData(), saved);
        else qunsetenv(name.constData());
    }
};

QJsonObject environmentOf(const QJsonObject& record, int rank)
{
    return record.value(QStringLiteral("ranks")).toArray().at(rank).toObject().value(QStringLiteral("environment")).toObject();
}

QString env(const QJsonObject& environment, const char* name)
{
    return environment.value(QLatin1String(name)).toString(QStringLiteral("<absent>"));
}

} // namespace

class TestSlurmParts : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void taskFailureLines()
    {
        const QList<TaskFailure> failures = parseTaskFailures({
            QStringLiteral("srun: error: node07: task 1: Exited with exit code 3"),
            QStringLiteral("srun: error: node07: tasks 0,2-3: Killed"),
            QStringLiteral("  srun: error: gpu-a: task 5: Segmentation fault (core dumped)  "),
            QStringLiteral("srun: error: gpu-b: task 6: Aborted"),
            QStringLiteral("srun: error: gpu-b: task 7: Terminated"),
            QStringLiteral("srun: error: gpu-b: task 8: Out Of Memory"),
            QStringLiteral("srun: error: node07: task 1: Killed"),          // task 1 again: its first line counts
        });
        QCOMPARE(failures.size(), 8);
        QCOMPARE(failures[0].task, 1);
        QCOMPARE(failures[0].host, QStringLiteral("node07"));
        QCOMPARE(failures[0].exitCode, 3);
        QCOMPARE(failures[0].exitSignal, 0);
        QCOMPARE(failures[0].text, QStringLiteral("Exited with exit code 3"));
        QCOMPARE((QList<int>{failures[1].task, failures[2].task, failures[3].task}), (QList<int>{0, 2, 3}));
        for (int i = 1; i <= 3; ++i) {
            QCOMPARE(failures[i].exitSignal, SIGKILL);
            QCOMPARE(failures[i].exitCode, 0);
        }
        QCOMPARE(failures[4].task, 5);
        QCOMPARE(failures[4].host, QStringLiteral("gpu-a"));
        QCOMPARE(failures[4].exitSignal, SIGSEGV);
        QCOMPARE(failures[5].exitSignal, SIGABRT);
        QCOMPARE(failures[6].exitSignal, SIGTERM);
        // Words that name neither a code nor a signal are kept as srun wrote them.
        QCOMPARE(failures[7].task, 8);
        QCOMPARE(failures[7].exitSignal, 0);
        QCOMPARE(failures[7].exitCode, 0);
        QCOMPARE(failures[7].text, QStringLiteral("Out Of Memory"));
    }

    void linesThatNameNoTaskAreIgnored()
    {
        QVERIFY(parseTaskFailures({
                    QStringLiteral("srun: Job step aborted: Waiting up to 32 seconds for job step to finish."),
                    QStringLiteral("slurmstepd: error: *** STEP 57.0 ON node07 CANCELLED AT 2026-12-01T10:00:00 ***"),
                    QStringLiteral("srun: error: Timed out waiting for job step to complete"),
                    QStringLiteral("rank 1: srun: error: node07: task 1: Exited with exit code 1"),   // not at the start
                    QStringLiteral("srun: error: node07: task x: Killed"),
                    QStringLiteral("srun: error: node07: tasks 5-2: Killed"),                          // a backwards range
                    QString(),
                })
                    .isEmpty());
        // A huge range is bounded, not expanded without end.
        const QList<TaskFailure> many = parseTaskFailures({QStringLiteral("srun: error: n: tasks 0-2000000000: Killed")});
        QCOMPARE(many.size(), 4096);
        QCOMPARE(many.last().task, 4095);
    }

    // srun's --kill-on-bad-exit kills the others once one task exits non-zero: the task that exited is the
    // cause, with its host and its exception; the killed ones are not blamed.
    void failedTaskIsTheCauseNotItsKilledPeers()
    {
        const std::vector<QStringList> ranks{
            {QStringLiteral("rank 0 step 3")},
            {QStringLiteral("Traceback (most recent call last):"), QStringLiteral("  File \"train.py\", line 9, in <module>"),
             QStringLiteral("    raise RuntimeError(\"boom\")"), QStringLiteral("RuntimeError: boom")}};
        const RootCause cause = judge(ended(SlurmJobState::Failed, "FAILED", 1),
                                      {QStringLiteral("srun: error: node07: task 0: Killed"),
                                       QStringLiteral("srun: error: node08: task 1: Exited with exit code 1")},
                                      ranks, true);
        QCOMPARE(cause.rank, 1);
        QCOMPARE(cause.exitCode, 1);
        QVERIFY2(cause.reason.startsWith(QStringLiteral("exited with code 1")) && cause.reason.endsWith(QStringLiteral(" on node08")),
                 qPrintable(cause.reason));
        QVERIFY2(cause.lastLines.contains(QStringLiteral("RuntimeError: boom")), qPrintable(cause.lastLines.join(u'|')));
    }

    // The trainer's exit codes mean something (2: bad input); a script's 2 is Python's command-line error.
    void exitCodesAreReadAsTheProgramMeansThem()
    {
        const std::vector<QStringList> ranks{{}, {}};
        const QStringList log{QStringLiteral("srun: error: node07: task 1: Exited with exit code 2")};
        const RootCause trainer = judge(ended(SlurmJobState::Failed, "FAILED", 2), log, ranks, false);
        QCOMPARE(trainer.rank, 1);
        QVERIFY2(trainer.reason.contains(QStringLiteral("(bad input)")), qPrintable(trainer.reason));
        const RootCause script = judge(ended(SlurmJobState::Failed, "FAILED", 2), log, ranks, true);
        QVERIFY2(script.reason.contains(QStringLiteral("Python's code for a command-line error")), qPrintable(script.reason));
    }

    // A task that crashed (no exit code anywhere) is the cause, named with the signal.
    void crashedTaskIsNamedWithItsSignal()
    {
        const std::vector<QStringList> ranks{{QStringLiteral("about to crash")}, {}};
        const RootCause cause = judge(ended(SlurmJobState::Failed, "FAILED", 0, 11),
                                      {QStringLiteral("srun: error: node07: task 0: Segmentation fault (core dumped)")}, ranks);
        QCOMPARE(cause.rank, 0);
        QCOMPARE(cause.exitSignal, SIGSEGV);
        QVERIFY2(cause.reason.startsWith(QStringLiteral("crashed (signal 11 (SIGSEGV))")), qPrintable(cause.reason));
        QCOMPARE(cause.lastLines, QStringList{QStringLiteral("about to crash")});
    }

    // Slurm ended the job itself: its end is the cause, with the fix; srun's terminated tasks are only
    // mentioned, never blamed (no "killed by SIGTERM, which Ringmaster did not send").
    void slurmsOwnEndIsTheCause_data()
    {
        QTest::addColumn<int>("state");
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("log");
        QTest::addColumn<QString>("reason");
        QTest::newRow("TIMEOUT") << int(SlurmJobState::Timeout) << QStringLiteral("TIMEOUT") << kTimeLimitLog
                                 << QStringLiteral("Slurm ended job 57 at its time limit (TIMEOUT): ask for more time with --time "
                                                   "(srun: task 0 on node07: Terminated; task 1 on node07: Terminated)");
        QTest::newRow("TIMEOUT, nothing from srun") << int(SlurmJobState::Timeout) << QStringLiteral("TIMEOUT") << QStringList()
                                                    << QStringLiteral("Slurm ended job 57 at its time limit (TIMEOUT): ask for more time with --time");
        QTest::newRow("OUT_OF_MEMORY") << int(SlurmJobState::OutOfMemory) << QStringLiteral("OUT_OF_MEMORY")
                                       << QStringList{QStringLiteral("slurmstepd: error: Detected 1 oom_kill event in StepId=57.0."),
                                                      QStringLiteral("srun: error: node07: task 1: Out Of Memory")}
                                       << QStringLiteral("Slurm ended job 57 for using more memory than it asked for (OUT_OF_MEMORY): "
                                                         "ask for more with --slurm-arg=--mem=SIZE (srun: task 1 on node07: Out Of Memory)");
        QTest::newRow("NODE_FAIL") << int(SlurmJobState::NodeFail) << QStringLiteral("NODE_FAIL")
                                   << QStringList{QStringLiteral("srun: error: node08: tasks 2-3: Killed")}
                                   << QStringLiteral("a node of Slurm job 57 failed (NODE_FAIL) (srun: task 2 on node08: Killed; "
                                                     "task 3 on node08: Killed)");
        QTest::newRow("CANCELLED") << int(SlurmJobState::Cancelled) << QStringLiteral("CANCELLED")
                                   << QStringList{QStringLiteral("slurmstepd: error: *** STEP 57.0 ON node07 CANCELLED AT 2026-12-01T10:00:00 ***")}
                                   << QStringLiteral("Slurm job 57 was cancelled outside Ringmaster (scancel, or an administrator)");
        QTest::newRow("gone") << int(SlurmJobState::Gone) << QString() << QStringList()
                              << QStringLiteral("Slurm no longer knows job 57 (it ended without a record Ringmaster could read)");
    }
    void slurmsOwnEndIsTheCause()
    {
        QFETCH(int, state);
        QFETCH(QString, text);
        QFETCH(QStringList, log);
        QFETCH(QString, reason);
        const std::vector<QStringList> ranks{{QStringLiteral("rank 0 line")}, {QStringLiteral("rank 1 line")}, {}, {}};
        const RootCause cause = judge(ended(static_cast<SlurmJobState>(state), qPrintable(text), 0, 15), log, ranks);
        QCOMPARE(cause.reason, reason);
        QCOMPARE(cause.rank, -1);
        QCOMPARE(cause.summary(), reason);
        // The first task srun named: its last lines go with the report (an out-of-memory task's, say).
        const QList<TaskFailure> named = parseTaskFailures(log);
        if (!named.isEmpty()) QCOMPARE(cause.lastLines, ranks[static_cast<std::size_t>(named.first().task)]);
    }

    // A task that exited with a code of its own before Slurm ended the job is still the cause.
    void aTasksOwnExitOutranksSlurmsEnd()
    {
        const std::vector<QStringList> ranks{{}, {QStringLiteral("ValueError: bad shape")}};
        const RootCause cause = judge(ended(SlurmJobState::Cancelled, "CANCELLED"),
                                      {QStringLiteral("srun: error: node07: task 1: Exited with exit code 1"),
                                       QStringLiteral("srun: error: node07: task 0: Terminated")},
                                      ranks, true);
        QCOMPARE(cause.rank, 1);
        QVERIFY2(cause.reason.startsWith(QStringLiteral("exited with code 1")), qPrintable(cause.reason));
    }

    // FAILED with no task named: the batch script's exit code, its log's path and its last lines.
    void failedBatchScriptGivesItsExitCodeAndLastLines()
    {
        QStringList log;
        for (int i = 1; i <= 12; ++i) log << QStringLiteral("batch line %1").arg(i);
        const std::vector<QStringList> ranks{{}, {}};
        const RootCause cause = judge(ended(SlurmJobState::Failed, "FAILED", 2), log, ranks);
        QCOMPARE(cause.reason, QStringLiteral("Slurm job 57 ended as FAILED (batch script exit code 2): see /runs/r/slurm/batch-57.log"));
        QCOMPARE(cause.rank, -1);
        QCOMPARE(cause.lastLines.size(), kSlurmTailLinesInReport);
        QCOMPARE(cause.lastLines.last(), QStringLiteral("batch line 12"));
        // Exit code 0 is not mentioned (e.g. a state Ringmaster does not name).
        QCOMPARE(judge(ended(SlurmJobState::Other, "PREEMPTED"), {}, ranks).reason,
                 QStringLiteral("Slurm job 57 ended as PREEMPTED: see /runs/r/slurm/batch-57.log"));
    }

    // A task number outside the run (a malformed or foreign line) is not blamed.
    void aTaskOutsideTheRunIsIgnored()
    {
        const std::vector<QStringList> ranks{{}, {}};
        const RootCause cause = judge(ended(SlurmJobState::Failed, "FAILED", 1),
                                      {QStringLiteral("srun: error: node07: task 7: Exited with exit code 1")}, ranks);
        QCOMPARE(cause.rank, -1);
        QVERIFY(cause.reason.startsWith(QStringLiteral("Slurm job 57 ended as FAILED (batch script exit code 1)")));
    }

    // RINGMASTER_LISTEN_ADDRESS wins, as an address or a host name; scontrol is not even asked.
    void listenAddressFromTheEnvironment()
    {
        slurmtest::Stubs stubs;
        stubs.answer("scontrol", "SlurmctldHost[0] = ctl(10.9.9.9)\n");
        {
            ScopedEnv given(kListenAddressEnv, "  10.1.2.3 ");
            const ReachableAddress chosen = addressComputeNodesReach(stubs.client());
            QCOMPARE(chosen.address, QHostAddress(QStringLiteral("10.1.2.3")));
            QVERIFY(chosen.error.isEmpty());
            QCOMPARE(chosen.how, QStringLiteral("RINGMASTER_LISTEN_ADDRESS=10.1.2.3"));
        }
        {
            ScopedEnv given(kListenAddressEnv, "localhost");
            const ReachableAddress chosen = addressComputeNodesReach(stubs.client());
            QVERIFY2(chosen.address.isLoopback(), qPrintable(chosen.address.toString()));
            QVERIFY(chosen.error.isEmpty());
        }
        {
            ScopedEnv given(kListenAddressEnv, "bad..name");
            const ReachableAddress chosen = addressComputeNodesReach(stubs.client());
            QVERIFY(chosen.address.isNull());
            QVERIFY2(chosen.error.startsWith(QStringLiteral("RINGMASTER_LISTEN_ADDRESS=bad..name is not an address or a host name")),
                     qPrintable(chosen.error));
        }
        QVERIFY2(stubs.args("scontrol").isEmpty(), qPrintable(stubs.args("scontrol")));
    }

    // Without it: the address this host sends from towards slurmctld (the first controller that resolves).
    void listenAddressTowardsTheController()
    {
        ScopedEnv none(kListenAddressEnv, QByteArray());
        slurmtest::Stubs stubs;
        stubs.answer("scontrol", "Configuration data as of 2026-12-01T10:00:00\n"
                                 "SlurmctldHost[0]           = bad..name\n"
                                 "SlurmctldHost[1]           = backup(127.0.0.1)\n");
        const ReachableAddress chosen = addressComputeNodesReach(stubs.client());
        QCOMPARE(chosen.address, QHostAddress(QHostAddress::LocalHost));
        QVERIFY(chosen.error.isEmpty());
        QCOMPARE(chosen.how, QStringLiteral("this host's address towards slurmctld on 127.0.0.1"));
        QCOMPARE(stubs.args("scontrol").trimmed(), QStringLiteral("show config"));
        QCOMPARE(sourceAddressTowards(QHostAddress(QHostAddress::LocalHost), kSlurmctldDefaultPort), QHostAddress(QHostAddress::LocalHost));
        QVERIFY(sourceAddressTowards(QHostAddress(), kSlurmctldDefaultPort).isNull());
    }

    // scontrol cannot answer: this host's first network address, else loopback; the log says which.
    void listenAddressWithoutTheController()
    {
        ScopedEnv none(kListenAddressEnv, QByteArray());
        slurmtest::Stubs stubs;
        stubs.answer("scontrol", {}, "slurm_load_ctl_conf error: Unable to contact slurm controller\n", 1);
        const ReachableAddress chosen = addressComputeNodesReach(stubs.client());
        QVERIFY(chosen.error.isEmpty());
        QHostAddress expected(QHostAddress::LocalHost);
        for (const QHostAddress& address : QNetworkInterface::allAddresses()) {
            if (address.protocol() == QAbstractSocket::IPv4Protocol && !address.isLoopback()) {
                expected = address;
                break;
            }
        }
        QCOMPARE(chosen.address, expected);
        QCOMPARE(chosen.how, expected.isLoopback() ? QStringLiteral("loopback: this host has no other address")
                                                   : QStringLiteral("this host's first network address (slurmctld's host is unknown)"));
    }

    // commands.json of a script job: each task's interpreter, script and arguments byte for byte, the torchrun
    // contract it runs with (ranks in Slurm's block order, the port from the job id), the socket and token
    // offered (the token never written), and only what differs from the submitting environment.
    void launchRecordOfAScriptJob()
    {
        QTemporaryDir runDir;
        BatchScriptInput input = slurmtest::scriptInput(runDir.path(), QStringLiteral("/home/u/train.py"), slurmtest::kAwkwardArguments);
        input.request.nodes = 2;   // 2 nodes x 2 tasks
        input.request.extraArgs = {QStringLiteral("--cpus-per-task=3")};
        QProcessEnvironment base;
        base.insert(QStringLiteral("PYTHONUNBUFFERED"), QStringLiteral("1"));   // inherited unchanged: not recorded
        base.insert(QStringLiteral("PYTHONPATH"), QStringLiteral("/site"));
        base.insert(QStringLiteral("RANK"), QStringLiteral("3"));   // a launcher's variable: unset and set again, so recorded
        SubmitterOffer offer;
        offer.socketPath = QStringLiteral("/tmp/rm.sock");
        offer.token = true;
        const QJsonObject record = slurmLaunchRecord(input, QStringLiteral("18234"), offer, base);
        QCOMPARE(record.value(QStringLiteral("slurm_job_id")).toString(), QStringLiteral("18234"));
        QCOMPARE(record.value(QStringLiteral("restart")).toInt(-1), 0);
        QCOMPARE(record.value(QStringLiteral("batch_script")).toString(), runDir.filePath(QStringLiteral("slurm/job.sbatch")));
        const QJsonArray ranks = record.value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 4);
        for (int rank = 0; rank < 4; ++rank) {
            const QJsonObject task = ranks.at(rank).toObject();
            QCOMPARE(task.value(QStringLiteral("rank")).toInt(-1), rank);
            QCOMPARE(task.value(QStringLiteral("node")).toInt(-1), rank / 2);
            QCOMPARE(task.value(QStringLiteral("program")).toString(), QString::fromLatin1(slurmtest::kPython));
            QStringList arguments;
            for (const auto& argument : task.value(QStringLiteral("arguments")).toArray()) arguments << argument.toString();
            QCOMPARE(arguments, QStringList{QStringLiteral("/home/u/train.py")} + slurmtest::kAwkwardArguments);
        }
        const QJsonObject third = environmentOf(record, 3);
        QCOMPARE(env(third, "RANK"), QStringLiteral("3"));
        QCOMPARE(env(third, "LOCAL_RANK"), QStringLiteral("1"));
        QCOMPARE(env(third, "WORLD_SIZE"), QStringLiteral("4"));
        QCOMPARE(env(third, "LOCAL_WORLD_SIZE"), QStringLiteral("2"));
        QCOMPARE(env(third, "GROUP_RANK"), QStringLiteral("1"));
        QCOMPARE(env(third, "GROUP_WORLD_SIZE"), QStringLiteral("2"));
        QCOMPARE(env(third, "ROLE_RANK"), QStringLiteral("3"));
        QCOMPARE(env(third, "MASTER_ADDR"), QString::fromLatin1(kFirstNodeText));
        QCOMPARE(env(third, "MASTER_PORT"), QString::number(15000 + 18234 % 17000));
        QCOMPARE(env(third, "TORCHELASTIC_MAX_RESTARTS"), QStringLiteral("3"));
        QCOMPARE(env(third, "TORCHELASTIC_RUN_ID"), QFileInfo(runDir.path()).fileName());
        QCOMPARE(env(third, "RINGMASTER_RUN_DIR"), runDir.path());
        QCOMPARE(env(third, "OMP_NUM_THREADS"), QStringLiteral("3"));
        QCOMPARE(env(third, "PYTHONPATH"), QStringLiteral("/opt/ringmaster helper:/site"));
        QCOMPARE(env(third, "PYTHONUNBUFFERED"), QStringLiteral("<absent>"));
        QCOMPARE(env(third, "RINGMASTER_SOCKET"), QStringLiteral("/tmp/rm.sock"));
        QCOMPARE(env(third, "RINGMASTER_ENDPOINT"), QStringLiteral("<absent>"));
        QCOMPARE(env(third, "RINGMASTER_TOKEN"), QStringLiteral("(secret)"));
        QCOMPARE(env(third, "TORCHELASTIC_ERROR_FILE"), runDir.path() + QStringLiteral("/logs/error-rank-3.json"));
        QCOMPARE(env(third, "TORCH_NCCL_ASYNC_ERROR_HANDLING"), QStringLiteral("1"));
        QCOMPARE(env(third, "TORCHELASTIC_SIGNALS_TO_HANDLE"), QStringLiteral("SIGTERM,SIGINT,SIGHUP,SIGQUIT"));
        QCOMPARE(env(third, "ACCELERATE_USE_CPU"), QStringLiteral("true"));
        QCOMPARE(env(third, "RINGMASTER_STACKS_FILE"), runDir.path() + QStringLiteral("/logs/rank-3.stacks.txt"));
        QCOMPARE(env(third, "RINGMASTER_STACKS_SIGNAL"), QString::number(SIGRTMIN + 2));
        QCOMPARE(env(third, "TORCH_FR_DUMP_TEMP_FILE"), QStringLiteral("<absent>")); // a CPU job: no NCCL
        QCOMPARE(env(environmentOf(record, 0), "RANK"), QStringLiteral("0"));
        // A default the submitting environment already sets is its own: not recorded as Ringmaster's.
        base.insert(QStringLiteral("ACCELERATE_USE_CPU"), QStringLiteral("false"));
        QCOMPARE(env(environmentOf(slurmLaunchRecord(input, QStringLiteral("18234"), offer, base), 3), "ACCELERATE_USE_CPU"),
                 QStringLiteral("<absent>"));
    }

    // The trainer derives its contract from Slurm's variables: the same values are recorded, nothing of a
    // script's; an endpoint without a socket ("launch.slurm.metrics" tcp); no token where none was offered.
    void launchRecordOfATrainerJob()
    {
        BatchScriptInput input;
        input.job.nproc = 3;
        input.request.enabled = true;
        input.request.nodes = 2;
        input.runDir = QStringLiteral("/shared/runs/r1");
        input.jobFile = QStringLiteral("/shared/runs/r1/job.json");
        input.trainerPath = QStringLiteral("/opt/bin/ringmaster-trainer");
        input.resumeFrom = QStringLiteral("/shared/runs/r1");
        SubmitterOffer offer;
        offer.endpoint = QStringLiteral("10.0.0.5:41000");
        offer.token = true;
        const QJsonObject record = slurmLaunchRecord(input, QStringLiteral("7"), offer, QProcessEnvironment());
        const QJsonArray ranks = record.value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 6);
        const QJsonObject fifth = ranks.at(4).toObject();
        QCOMPARE(fifth.value(QStringLiteral("program")).toString(), QStringLiteral("/opt/bin/ringmaster-trainer"));
        QCOMPARE(fifth.value(QStringLiteral("arguments")).toArray(),
                 QJsonArray::fromStringList({QStringLiteral("--job"), QStringLiteral("/shared/runs/r1/job.json"), QStringLiteral("--out"),
                                             QStringLiteral("/shared/runs/r1"), QStringLiteral("--device"), QStringLiteral("cpu"),
                                             QStringLiteral("--resume"), QStringLiteral("/shared/runs/r1")}));
        QCOMPARE(fifth.value(QStringLiteral("node")).toInt(-1), 1);
        const QJsonObject environment = environmentOf(record, 4);
        QCOMPARE(environment.keys(),
                 (QStringList{QStringLiteral("LOCAL_RANK"), QStringLiteral("LOCAL_WORLD_SIZE"), QStringLiteral("MASTER_ADDR"),
                              QStringLiteral("MASTER_PORT"), QStringLiteral("RANK"), QStringLiteral("RINGMASTER_ENDPOINT"),
                              QStringLiteral("RINGMASTER_TOKEN"), QStringLiteral("WORLD_SIZE")}));
        QCOMPARE(env(environment, "RANK"), QStringLiteral("4"));
        QCOMPARE(env(environment, "LOCAL_RANK"), QStringLiteral("1"));
        QCOMPARE(env(environment, "WORLD_SIZE"), QStringLiteral("6"));
        QCOMPARE(env(environment, "MASTER_PORT"), QStringLiteral("15007"));
        QCOMPARE(env(environment, "RINGMASTER_ENDPOINT"), QStringLiteral("10.0.0.5:41000"));
        offer.token = false;
        QVERIFY(!environmentOf(slurmLaunchRecord(input, QStringLiteral("7"), offer, QProcessEnvironment()), 0)
                     .contains(QStringLiteral("RINGMASTER_TOKEN")));
    }

    // The line a run left running prints: a command that can be pasted as it is.
    void attachCommandLineQuotesOnlyWhatNeedsIt()
    {
        QCOMPARE(attachCommandLine(QStringLiteral("/work/runs/20261201-100000-cnn")),
                 QStringLiteral("ringmaster-launch --attach /work/runs/20261201-100000-cnn"));
        QCOMPARE(attachCommandLine(QStringLiteral("/work/my runs/it's")),
                 QStringLiteral("ringmaster-launch --attach '/work/my runs/it'\\''s'"));
    }
};

QTEST_GUILESS_MAIN(TestSlurmParts)
#include "tst_slurm_parts.moc"
