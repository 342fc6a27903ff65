#include "supervisor/slurm/batch_script.h"

#include <QDir>
#include <QFileDevice>
#include <QFileInfo>
#include <QSaveFile>
#include <QStringList>

#include "protocol/run_layout.h"
#include "supervisor/control_characters.h"
#include "supervisor/script_environment.h"

namespace ringmaster::supervisor {
namespace {

// Variables a launcher sets per process. The submitter's environment reaches the job (sbatch exports it
// by default), so whatever it had of these is removed: each task gets its own below, or derives them.
// The supervisor that submits the job passes its own socket and token in sbatch's environment under
// kSubmitterSocketEnv / kSubmitterEndpointEnv / kSubmitterTokenEnv (never in this readable file); they
// become the tasks' RINGMASTER_SOCKET / RINGMASTER_ENDPOINT / RINGMASTER_TOKEN, so rank 0 reports live
// over the socket when it runs on the submitting host, else over TCP.
constexpr char kLauncherVariables[] =
    "RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE MASTER_ADDR MASTER_PORT GROUP_RANK GROUP_WORLD_SIZE "
    "ROLE_NAME ROLE_RANK ROLE_WORLD_SIZE TORCHELASTIC_RESTART_COUNT TORCHELASTIC_MAX_RESTARTS "
    "TORCHELASTIC_RUN_ID RINGMASTER_SOCKET RINGMASTER_ENDPOINT RINGMASTER_TOKEN";

// What each task of a script runs before the interpreter: its ranks from Slurm's per-task variables, where its
// exception goes and where its Python stacks go on request (script_environment.h), then exec "$0" "$@" (the
// interpreter, the script and its arguments, passed as separate words).
QString taskContract()
{
    return QStringLiteral("export RANK=\"$SLURM_PROCID\" LOCAL_RANK=\"$SLURM_LOCALID\" WORLD_SIZE=\"$SLURM_NTASKS\" "
                          "GROUP_RANK=\"$SLURM_NODEID\" ROLE_RANK=\"$SLURM_PROCID\" ROLE_WORLD_SIZE=\"$SLURM_NTASKS\" "
                          "%1=\"%2\" %3=\"%4\" %5=%6; exec \"$0\" \"$@\"")
        .arg(QLatin1String(kErrorFileVariable),
             errorFileOf(QStringLiteral("$RINGMASTER_RUN_DIR"), QStringLiteral("$SLURM_PROCID")),
             QLatin1String(kStacksFileVariable),
             stacksFileOf(QStringLiteral("$RINGMASTER_RUN_DIR"), QStringLiteral("$SLURM_PROCID")),
             QLatin1String(kStacksSignalVariable), QString::number(pythonStacksSignal()));
}

QString sbatchLine(const char* option, const QString& value)
{
    return QStringLiteral("#SBATCH --%1=%2").arg(QLatin1String(option), value);
}

QString runName(const BatchScriptInput& input)
{
    return QFileInfo(QDir::cleanPath(input.runDir)).fileName();
}

// The program a task runs and its arguments, each quoted; continued lines for readability.
QString commandWords(const QStringList& words)
{
    QStringList quoted;
    for (const QString& word : words) quoted.append(shellQuote(word));
    return quoted.join(QLatin1Char(' '));
}

} // namespace

QString shellQuote(const QString& text)
{
    QString quoted = text;
    quoted.replace(QLatin1String("'"), QLatin1String("'\\''"));
    return QLatin1Char('\'') + quoted + QLatin1Char('\'');
}

QString sbatchQuote(const QString& text)
{
    QString escaped;
    for (const QChar c : text) {
        if (c == QLatin1Char('\\') || c == QLatin1Char('"') || c == QLatin1Char('#')) escaped.append(QLatin1Char('\\'));
        escaped.append(c);
    }
    return QLatin1Char('"') + escaped + QLatin1Char('"');
}

int slurmTasksPerNode(const JobSpec& job, const SlurmRequest& request)
{
    if (request.ntasksPerNode > 0) return request.ntasksPerNode;
    if (job.device == QLatin1String("cuda")) return request.gpusPerNode;
    return job.nproc;
}

QString slurmJobProblem(const JobSpec& job, const SlurmRequest& request)
{
    if (!request.enabled) return QStringLiteral("the job has no \"launch.slurm\": add one to run it under Slurm");
    const bool cuda = job.device == QLatin1String("cuda");
    if (cuda && request.gpusPerNode == 0) {
        return QStringLiteral("\"launch.slurm.gpus_per_node\" is 0 for a cuda job: set the GPUs per node "
                              "(one task runs per GPU), e.g. 4");
    }
    if (cuda && !job.gpus.isEmpty()) {
        return QStringLiteral("\"launch.gpus\" picks this machine's GPUs, but under Slurm the allocation decides: "
                              "remove it and set \"launch.slurm.gpus_per_node\"");
    }
    if (cuda && request.ntasksPerNode != 0 && request.ntasksPerNode != request.gpusPerNode) {
        return QStringLiteral("\"launch.slurm.ntasks_per_node\" (%1) differs from \"launch.slurm.gpus_per_node\" (%2): "
                              "a cuda job runs one task per GPU, so leave ntasks_per_node at 0 or make them equal")
            .arg(request.ntasksPerNode).arg(request.gpusPerNode);
    }
    if (!cuda && request.gpusPerNode != 0) {
        return QStringLiteral("\"launch.slurm.gpus_per_node\" is %1 for a cpu job: set \"launch.device\" to \"cuda\" "
                              "or gpus_per_node to 0").arg(request.gpusPerNode);
    }
    const qint64 world = qint64(request.nodes) * slurmTasksPerNode(job, request);
    if (world > kMaxJobRanks) {
        return QStringLiteral("%1 node(s) x %2 task(s) is %3 ranks, more than %4: ask for fewer nodes or tasks")
            .arg(request.nodes).arg(slurmTasksPerNode(job, request)).arg(world).arg(kMaxJobRanks);
    }
    return {};
}

QString batchScriptProblem(const BatchScriptInput& input)
{
    const QString values[] = {input.runDir, input.jobFile, input.trainerPath, input.interpreterPath, input.scriptPath,
                              input.helperDir, input.resumeFrom, input.job.device, input.request.partition,
                              input.request.account, input.request.time};
    for (const QString& value : values) {
        if (const QString found = controlCharacterIn(value); !found.isEmpty()) {
            return QStringLiteral("the batch script would hold %1 (in \"%2\"): paths and names cannot hold control characters")
                .arg(found, value.simplified());
        }
    }
    if (const QString problem = controlCharacterProblem(input.job); !problem.isEmpty()) return problem;
    for (const QString& extra : input.request.extraArgs) {
        if (const QString found = controlCharacterIn(extra); !found.isEmpty()) {
            return QStringLiteral("the batch script would hold %1 (in an extra sbatch option)").arg(found);
        }
    }
    return {};
}

QString batchScriptText(const BatchScriptInput& input)
{
    // Never written with a control character in an interpolated value, whatever the caller checked.
    if (!batchScriptProblem(input).isEmpty()) return {};
    const JobSpec& job = input.job;
    const SlurmRequest& request = input.request;
    const int tasksPerNode = slurmTasksPerNode(job, request);
    const int world = request.nodes * tasksPerNode;
    const QString name = runName(input);
    QStringList s;
    s << QStringLiteral("#!/bin/sh")
      << QStringLiteral("# Ringmaster's Slurm batch job for run %1: %2 node(s) x %3 task(s) = %4 rank(s), one srun step.")
             .arg(name, QString::number(request.nodes), QString::number(tasksPerNode), QString::number(world))
      << QStringLiteral("# Written by Ringmaster; submit it again by hand with: sbatch %1")
             .arg(shellQuote(QDir(input.runDir).filePath(QLatin1String(protocol::kSlurmBatchScriptFile))))
      << QStringLiteral("#")
      << QStringLiteral("# What Slurm is asked for. The batch script's own output goes to slurm/batch-<job id>.log,")
      << QStringLiteral("# each task's to logs/rank-<task>.log (both relative to the run directory).")
      << sbatchLine("job-name", sbatchQuote(QStringLiteral("ringmaster-") + name))
      << sbatchLine("chdir", sbatchQuote(input.runDir))
      << sbatchLine("output", QString::fromStdString(protocol::slurmBatchLogFile("%j")))
      << sbatchLine("nodes", QString::number(request.nodes))
      << sbatchLine("ntasks-per-node", QString::number(tasksPerNode));
    if (request.gpusPerNode > 0) s << sbatchLine("gpus-per-node", QString::number(request.gpusPerNode));
    if (!request.partition.isEmpty()) s << sbatchLine("partition", request.partition);
    if (!request.time.isEmpty()) s << sbatchLine("time", request.time);
    if (!request.account.isEmpty()) s << sbatchLine("account", request.account);
    for (const QString& extra : request.extraArgs) s << QStringLiteral("#SBATCH ") + extra;

    s << QString()
      << QStringLiteral("# The run directory: every task starts here; logs/ holds one log per task.")
      << QStringLiteral("RUN_DIR=%1").arg(shellQuote(input.runDir))
      << QStringLiteral("cd \"$RUN_DIR\" || { echo \"ringmaster: cannot enter $RUN_DIR on $(hostname)\" >&2; exit 1; }")
      << QStringLiteral("mkdir -p logs")
      << QString()
      << QStringLiteral("# A launcher's per-process variables from the submitting environment must not reach the tasks.")
      << QStringLiteral("unset %1").arg(QLatin1String(kLauncherVariables))
      << QStringLiteral("# Rank 0 reports live to the Ringmaster that submitted the job (socket, TCP endpoint and token")
      << QStringLiteral("# come through sbatch's environment, not this file); submitted by hand, the tasks write their files only.")
      << QStringLiteral("if [ -n \"${%1:-}\" ]; then export RINGMASTER_SOCKET=\"$%1\"; fi").arg(QLatin1String(kSubmitterSocketEnv))
      << QStringLiteral("if [ -n \"${%1:-}\" ]; then export RINGMASTER_ENDPOINT=\"$%1\"; fi").arg(QLatin1String(kSubmitterEndpointEnv))
      << QStringLiteral("if [ -n \"${%1:-}\" ]; then export RINGMASTER_TOKEN=\"$%1\"; fi").arg(QLatin1String(kSubmitterTokenEnv))
      << QStringLiteral("unset %1 %2 %3").arg(QLatin1String(kSubmitterSocketEnv), QLatin1String(kSubmitterEndpointEnv),
                                               QLatin1String(kSubmitterTokenEnv));
    if (job.device == QLatin1String("cuda")) {
        s << QStringLiteral("# PyTorch's flight recorder dumps each rank's last NCCL collectives into the run directory when NCCL's")
          << QStringLiteral("# watchdog times out (script_environment.h), unless the environment says otherwise.");
        for (const auto& [name, value] : ncclTraceEnvironment(QStringLiteral("$RUN_DIR"))) {
            s << QStringLiteral("export %1=\"${%1-%2}\"").arg(name, value);
        }
    }

    // One step, one task per rank; --kill-on-bad-exit ends the others when a rank fails, as the local
    // supervisor brings the group down. CPUs per task: what the job asked for (srun 22.05 does not
    // inherit sbatch's --cpus-per-task). Each task sees every GPU of its node and takes GPU LOCAL_RANK.
    const QString srun = QStringLiteral("srun --nodes=%1 --ntasks=%2 --ntasks-per-node=%3 --cpus-per-task=\"${SLURM_CPUS_PER_TASK:-1}\" "
                                        "--kill-on-bad-exit=1 --output=logs/rank-%t.log \\")
                             .arg(request.nodes).arg(world).arg(tasksPerNode);
    if (!job.isScript()) {
        const QStringList trainer{input.trainerPath, QStringLiteral("--job"), input.jobFile, QStringLiteral("--out"), input.runDir,
                                  QStringLiteral("--device"), job.device};
        const QStringList resume = input.resumeFrom.isEmpty() ? QStringList{} : QStringList{QStringLiteral("--resume"), input.resumeFrom};
        s << QString()
          << QStringLiteral("# A job Slurm requeued (a node failed, a preemption: SLURM_RESTART_COUNT > 0) continues from the run's")
          << QStringLiteral("# newest checkpoint instead of starting again at step 0 and setting the checkpoints aside.")
          << QStringLiteral("set -- %1").arg(commandWords(resume))
          << QStringLiteral("if [ \"${SLURM_RESTART_COUNT:-0}\" -gt 0 ] && ls \"$RUN_DIR\"/checkpoints/step-*.pt >/dev/null 2>&1; then")
          << QStringLiteral("  echo \"ringmaster: requeued (restart $SLURM_RESTART_COUNT): resuming from the newest checkpoint in $RUN_DIR\" >&2")
          << QStringLiteral("  set -- --resume \"$RUN_DIR\"")
          << QStringLiteral("fi")
          << QString()
          << QStringLiteral("# Each task is one ringmaster-trainer rank. It reads its rank from SLURM_PROCID, SLURM_LOCALID and")
          << QStringLiteral("# SLURM_NTASKS, and derives the rendezvous itself: the first node of the step, port")
          << QStringLiteral("# %1 + SLURM_JOB_ID % %2 (its log says so).").arg(kSlurmMasterPortBase).arg(kSlurmMasterPortSpan)
          << srun
          << QStringLiteral("  ") + commandWords(trainer) + QStringLiteral(" \"$@\"");
        return s.join(QLatin1Char('\n')) + QLatin1Char('\n');
    }

    s << QString()
      << QStringLiteral("# The rendezvous, the same for every task: rank 0 runs on the job's first node; the port follows")
      << QStringLiteral("# ringmaster-trainer's rule, %1 + job id % %2.").arg(kSlurmMasterPortBase).arg(kSlurmMasterPortSpan)
      << QStringLiteral("MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)")
      << QStringLiteral("MASTER_PORT=$((%1 + SLURM_JOB_ID % %2))").arg(kSlurmMasterPortBase).arg(kSlurmMasterPortSpan)
      << QStringLiteral("export MASTER_ADDR MASTER_PORT")
      << QString()
      << QStringLiteral("# The rest of torchrun's contract that is the same for every task, and Ringmaster's own.")
      << QStringLiteral("export LOCAL_WORLD_SIZE=%1 GROUP_WORLD_SIZE=%2 ROLE_NAME=default").arg(tasksPerNode).arg(request.nodes)
      << QStringLiteral("# A job Slurm requeued (SLURM_RESTART_COUNT > 0) counts as a restart: a script resumes from its own checkpoint.")
      << QStringLiteral("export TORCHELASTIC_RESTART_COUNT=$((%1 + ${SLURM_RESTART_COUNT:-0})) TORCHELASTIC_MAX_RESTARTS=%2 TORCHELASTIC_RUN_ID=%3")
             .arg(input.restartCount).arg(job.maxRestarts).arg(shellQuote(name))
      << QStringLiteral("export RINGMASTER_RUN_DIR=\"$RUN_DIR\" PYTHONUNBUFFERED=1")
      << QStringLiteral("# One thread per rank unless the job asked for CPUs per task (torchrun's default is 1 too).")
      << QStringLiteral("export OMP_NUM_THREADS=\"${OMP_NUM_THREADS:-${SLURM_CPUS_PER_TASK:-1}}\"")
      << QStringLiteral("# torchrun's defaults, and the run device's switch for Accelerate, unless the environment sets them.");
    for (const auto& [name, value] : scriptDefaultsFor(job.device)) {
        s << QStringLiteral("export %1=\"${%1-%2}\"").arg(QLatin1String(name), QLatin1String(value)); // set, even empty: kept
    }
    if (!input.helperDir.isEmpty()) {
        s << QStringLiteral("# `import ringmaster` (the helper module) works without installing anything.")
          << QStringLiteral("export PYTHONPATH=%1${PYTHONPATH:+:$PYTHONPATH}").arg(shellQuote(input.helperDir));
    }
    s << QString()
      << QStringLiteral("# Each task's own ranks from Slurm's per-task variables, then the interpreter with the script and")
      << QStringLiteral("# its arguments (\"$0\" \"$@\" below: passed as separate words, never re-read by a shell).")
      << QStringLiteral("TASK_CONTRACT=%1").arg(shellQuote(taskContract()))
      << srun
      << QStringLiteral("  /bin/sh -c \"$TASK_CONTRACT\" \\")
      << QStringLiteral("  ") + commandWords(QStringList{input.interpreterPath, input.scriptPath} + job.scriptArgs);
    return s.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

QString writeBatchScript(const BatchScriptInput& input, QString* error)
{
    if (const QString problem = batchScriptProblem(input); !problem.isEmpty()) {
        *error = problem;
        return {};
    }
    const QString path = QDir(input.runDir).filePath(QLatin1String(protocol::kSlurmBatchScriptFile));
    const QString folder = QFileInfo(path).absolutePath();
    if (!QDir().mkpath(folder)) {
        *error = QStringLiteral("cannot create %1: check that the run directory is writable").arg(folder);
        return {};
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return {};
    }
    file.write(batchScriptText(input).toUtf8());
    file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner |
                        QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther | QFileDevice::ExeOther);
    if (!file.commit()) {
        *error = QStringLiteral("cannot write %1: %2").arg(path, file.errorString());
        return {};
    }
    return path;
}

} // namespace ringmaster::supervisor
