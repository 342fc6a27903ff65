#include "supervisor/preflight.h"

#include "supervisor/check_run.h"
#include "supervisor/control_characters.h"
#include "supervisor/gpu_inventory.h"
#include "supervisor/gpu_placement.h"
#include "supervisor/metric_line_parser.h"
#include "supervisor/program_checks.h"
#include "protocol/run_lock.h"
#include "supervisor/slurm/slurm_preflight.h"
#include "supervisor/trainer_flags.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryFile>

#include <algorithm>

namespace ringmaster::supervisor {
namespace {

constexpr int kValidateTimeoutMs = 60000;
constexpr int kTorchImportTimeoutMs = 60000; // a cold `import torch` on a loaded machine takes seconds
constexpr int kMaxRanks = 1024; // the shared-memory all-reduce's cell count

QString checkCpuRanks(const JobSpec& job)
{
    if (job.nproc < 1) return QStringLiteral("--nproc %1: need at least 1 CPU rank").arg(job.nproc);
    if (job.nproc > kMaxRanks) return QStringLiteral("--nproc %1: at most %2 ranks on one machine").arg(job.nproc).arg(kMaxRanks);
    if (!job.gpus.isEmpty()) return QStringLiteral("--gpus was given with --device cpu: use --device cuda to train on GPUs");
    return {};
}

} // namespace

// A resume of a run directory that a launcher or the app is running now (it holds the run's lock).
QString checkNotRunningNow(const JobSpec& job)
{
    if (job.resume.isEmpty()) return {};
    const QString dir = runDirectoryOf(job.resume);
    std::string holder;
    if (dir.isEmpty() || protocol::probeRunLock(QFile::encodeName(dir).toStdString(), &holder) != protocol::RunLockState::Held) {
        return {};
    }
    return QStringLiteral("--resume %1: %2 is being run right now by %3: stop that run first, or resume another")
        .arg(job.resume, dir, QString::fromStdString(holder));
}

QString checkOutputFolder(const QString& target)
{
    QFileInfo info(target);
    QString existing = info.absoluteFilePath();
    while (!QFileInfo::exists(existing)) existing = QFileInfo(existing).absolutePath();
    QFileInfo parent(existing);
    // Permission bits say nothing for root or for read-only mounts (/proc, a full disk's quota):
    // try what the run will do, create a file there.
    QTemporaryFile probe(existing + QStringLiteral("/.ringmaster-write-test-XXXXXX"));
    if (!parent.isDir() || !probe.open()) {
        return QStringLiteral("output folder %1 is not writable (%2 is %3): choose another output folder")
            .arg(info.absoluteFilePath(), existing, parent.isDir() ? QStringLiteral("read-only") : QStringLiteral("not a folder"));
    }
    return {};
}

namespace {

QString validateWithTrainer(const QString& trainer, const JobSpec& job, const std::atomic_bool* cancelled)
{
    // The job's trainer flags as flags (not a temporary job file): the trainer's message then names
    // the flag the user gave, never a file the user has not seen.
    QStringList arguments;
    for (auto it = job.trainer.begin(); it != job.trainer.end(); ++it) {
        arguments << trainerFlagOf(it.key()) << flagValueText(it.value());
    }
    arguments << QStringLiteral("--device") << job.device << QStringLiteral("--validate-only");
    // The checkpoint the ranks would resume from is read now: a damaged or mismatched one is bad input.
    if (!job.resume.isEmpty()) arguments << QStringLiteral("--resume") << job.resume;
    // The world size decides each rank's shard: a batch larger than the shard is bad input.
    QProcessEnvironment world;
    world.insert(QStringLiteral("WORLD_SIZE"), QString::number(job.worldSize()));
    const CheckRun run = runCheck(trainer, arguments, trainer + QStringLiteral(" --validate-only"), kValidateTimeoutMs, cancelled, world);
    if (!run.failure.isEmpty()) return run.failure;
    if (run.exitCode == 0) return {};
    QString message = run.standardError.isEmpty() ? run.standardOutput : run.standardError;
    message = message.section(QLatin1Char('\n'), -1).trimmed(); // the error is the last line; warnings come before
    message.remove(QStringLiteral("ringmaster-trainer: error: "));
    return message.isEmpty() ? QStringLiteral("the trainer rejected the job (exit code %1)").arg(run.exitCode) : message;
}

QString missingInterpreter(const QString& python)
{
    return QStringLiteral("--python %1: no such interpreter%2: install Python 3 with PyTorch, or give its path with --python PATH")
        .arg(python, python.contains(QLatin1Char('/')) ? QString() : QStringLiteral(" on PATH"));
}

// The script is a readable file and the interpreter exists; cheap, so made before anything slow.
QString checkScriptFiles(const JobSpec& job, PreflightResult* result)
{
    const QFileInfo script(job.script);
    if (!script.exists()) return QStringLiteral("--script %1: no such file: give the path of your training script").arg(job.script);
    if (!script.isFile() || !script.isReadable()) {
        return QStringLiteral("--script %1: not a readable file: give the path of your training script").arg(job.script);
    }
    result->scriptPath = script.absoluteFilePath();
    if (const QString bad = MetricLineParser::checkPatterns(job.metricPatterns); !bad.isEmpty()) return bad;
    if (!job.tensorboardDir.isEmpty() && QFileInfo(job.tensorboardDir).exists() && !QFileInfo(job.tensorboardDir).isDir()) {
        return QStringLiteral("--tensorboard-dir %1: not a folder: give the folder your script writes its TensorBoard files to").arg(job.tensorboardDir);
    }
    result->interpreterPath = locateInterpreter(job.python);
    if (result->interpreterPath.isEmpty()) return missingInterpreter(job.python);
    if (const QString notPython = checkInterpreterProgram(job.python, result->interpreterPath); !notPython.isEmpty()) return notPython;
    if (const QString notChosen = checkInterpreterChoice(job, result->interpreterPath); !notChosen.isEmpty()) return notChosen;
    // The path runs as given (a virtualenv's python is a link its environment depends on), so nobody else may be
    // able to re-point it between this check and the run.
    return job.pythonFromFile ? checkNotChangeableByOthers(QStringLiteral("launch.python"), result->interpreterPath) : QString();
}

// The interpreter can import torch: a script without it would fail on every rank at its first line.
QString checkInterpreterHasTorch(const JobSpec& job, PreflightResult* result, const std::atomic_bool* cancelled)
{
    const CheckRun run = runCheck(result->interpreterPath,
                                  {QStringLiteral("-c"), QStringLiteral("import torch, sys; print(torch.__version__)")},
                                  result->interpreterPath + QStringLiteral(" -c 'import torch'"), kTorchImportTimeoutMs, cancelled);
    if (!run.failure.isEmpty()) return run.failure;
    if (run.exitCode != 0) {
        const QString why = (run.standardError.isEmpty() ? run.standardOutput : run.standardError).section(QLatin1Char('\n'), -1).trimmed();
        return QStringLiteral("--python %1 (%2) cannot import torch (%3): install PyTorch for it, or choose another interpreter with --python PATH")
            .arg(job.python, result->interpreterPath, why.isEmpty() ? QStringLiteral("exit code %1").arg(run.exitCode) : why);
    }
    result->torchVersion = run.standardOutput.section(QLatin1Char('\n'), -1).trimmed();
    return {};
}

} // namespace

PreflightResult checkScriptInterpreter(const QString& python, const std::atomic_bool* cancelled)
{
    PreflightResult result;
    JobSpec job;
    job.python = python;
    result.interpreterPath = locateInterpreter(python);
    if (result.interpreterPath.isEmpty()) result.error = missingInterpreter(python);
    else if (result.error = checkInterpreterProgram(python, result.interpreterPath); result.error.isEmpty()) {
        result.error = checkInterpreterHasTorch(job, &result, cancelled);
    }
    return result;
}

int nvidiaGpuCount()
{
    const GpuInventory inventory;
    if (inventory.available()) return static_cast<int>(inventory.query().size());
    return static_cast<int>(QDir(QStringLiteral("/proc/driver/nvidia/gpus")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size());
}

bool portIsFree(int port)
{
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, static_cast<quint16>(port));
}

int pickFreePort()
{
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, 0) ? probe.serverPort() : 0;
}

QString locateTrainer(const JobSpec& job)
{
    if (!job.trainerPath.isEmpty()) return QFileInfo(job.trainerPath).absoluteFilePath();
    if (const QString fromEnvironment = qEnvironmentVariable("RINGMASTER_TRAINER"); !fromEnvironment.isEmpty()) {
        return QFileInfo(fromEnvironment).absoluteFilePath();
    }
    // A trainer the user built against their own (CUDA) PyTorch comes before the one installed with the app.
    if (const QString built = userTrainerPath(); QFileInfo(built).isExecutable()) return built;
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/ringmaster-trainer");
    if (QFileInfo(beside).isExecutable()) return beside;
    return QStandardPaths::findExecutable(QStringLiteral("ringmaster-trainer"));
}

QString locateInterpreter(const QString& python)
{
    if (python.contains(QLatin1Char('/'))) {
        const QFileInfo path(python);
        return path.isFile() && path.isExecutable() ? path.absoluteFilePath() : QString();
    }
    return QStandardPaths::findExecutable(python);
}

PreflightResult runPreflight(const JobSpec& job, const std::atomic_bool* cancelled)
{
    PreflightResult result;
    // The command line's flags and the app's fields, as JobSpec::fromJson checks a file's.
    if (!(result.error = controlCharacterProblem(job)).isEmpty()) return result;
    if (job.isScript()) {
        if (!(result.error = checkScriptFiles(job, &result)).isEmpty()) return result;
    } else if (result.trainerPath = locateTrainer(job); result.trainerPath.isEmpty() || !QFileInfo(result.trainerPath).isExecutable()) {
        result.error = QStringLiteral("ringmaster-trainer not found%1: build it, or give its path with --trainer PATH")
                           .arg(result.trainerPath.isEmpty() ? QString() : QStringLiteral(" at ") + result.trainerPath);
        return result;
    } else if (!(result.error = checkTrainerProgram(job, result.trainerPath)).isEmpty()) {
        return result;
    } else if (job.trainerPathFromFile && (result.trainerPath = QFileInfo(result.trainerPath).canonicalFilePath()).isEmpty()) {
        // What runs is the file that was checked, not the job file's path to it (a link there could be re-pointed).
        result.error = QStringLiteral("job file: \"launch.trainer_path\" %1 vanished while it was checked").arg(job.trainerPath);
        return result;
    } else if (result.trainer = describeTrainer(result.trainerPath, cancelled); !result.trainer.known()) {
        result.error = result.trainer.error;
        if (result.trainerPath == userTrainerPath()) {
            // build-trainer's trainer outlived the PyTorch it was built against (a removed or upgraded venv).
            result.error += QStringLiteral(": build it again (ringmaster-build-trainer --python PATH) or remove %1").arg(result.trainerPath);
        }
        return result;
    }
    if (!(result.error = checkNotRunningNow(job)).isEmpty()) return result;
    if (job.maxRestarts < 0 || job.maxRestarts > kMaxRestarts) {
        result.error = QStringLiteral("--max-restarts %1: must be from 0 to %2").arg(job.maxRestarts).arg(kMaxRestarts);
        return result;
    }
    if (!(job.heartbeatTimeoutSec > 0 && job.heartbeatTimeoutSec <= kMaxHeartbeatTimeoutSec)) {
        result.error = QStringLiteral("--heartbeat-timeout %1: must be more than 0 and at most %2 seconds")
                           .arg(job.heartbeatTimeoutSec).arg(kMaxHeartbeatTimeoutSec);
        return result;
    }
    if (!(job.gracePeriodSec >= 0 && job.gracePeriodSec <= kMaxGracePeriodSec)) {
        result.error = QStringLiteral("--grace-period %1: must be from 0 to %2 seconds").arg(job.gracePeriodSec).arg(kMaxGracePeriodSec);
        return result;
    }
    if (!(job.stragglerAfterSec >= 0 && job.stragglerAfterSec <= kMaxStragglerAfterSec)) {
        result.error = QStringLiteral("--straggler-after %1: must be from 0 (off) to %2 seconds")
                           .arg(job.stragglerAfterSec).arg(kMaxStragglerAfterSec);
        return result;
    }
    if (job.slurm.enabled) {
        // Slurm places the ranks: this machine's CPUs and GPUs are not the job's.
        if (!(result.error = checkSlurmJob(job)).isEmpty()) return result;
        if (job.device == QLatin1String("cuda") && !job.isScript() && !result.trainer.hasCuda()) {
            result.error = trainerWithoutCudaMessage(result.trainer); // the nodes run this same trainer
            return result;
        }
    } else if (job.device == QLatin1String("cpu")) {
        if (!(result.error = checkCpuRanks(job)).isEmpty()) return result;
    } else if (job.device == QLatin1String("cuda")) {
        const GpuInventory inventory;
        const QList<GpuInfo> gpus = inventory.query();
        const int count = inventory.available() ? static_cast<int>(gpus.size()) : nvidiaGpuCount();
        const QString inherited = qEnvironmentVariableIsSet("CUDA_VISIBLE_DEVICES")
                                      ? qEnvironmentVariable("CUDA_VISIBLE_DEVICES") : QString();
        const QString inheritedOrder = qEnvironmentVariableIsSet("CUDA_DEVICE_ORDER")
                                           ? qEnvironmentVariable("CUDA_DEVICE_ORDER") : QString();
        const GpuPlacement placement = placeGpus(job, gpus, count, inherited, inheritedOrder);
        if (!(result.error = placement.error).isEmpty()) return result;
        if (!job.isScript() && !result.trainer.hasCuda()) {
            // GPUs are there, but every rank of a CPU-only trainer would start only to fail: say it now, with the fix.
            result.error = trainerWithoutCudaMessage(result.trainer);
            return result;
        }
        result.gpus = placement.gpus;
        result.visibleDevices = placement.visibleDevices;
        // What the run is launched on, recorded in commands.json (hardwareRecord) for bundles and bug reports.
        for (const int index : placement.gpus) {
            const auto found = std::find_if(gpus.begin(), gpus.end(), [index](const GpuInfo& gpu) { return gpu.index == index; });
            result.gpuNames.append(found != gpus.end() ? found->name : QString());
        }
        result.driverVersion = inventory.driverVersion();
    } else {
        result.error = QStringLiteral("--device %1: unknown device (valid: cpu|cuda)").arg(job.device);
        return result;
    }
    const QString outputTarget = job.runDir.isEmpty() ? job.outputRoot : QFileInfo(job.runDir).absolutePath();
    if (!(result.error = checkOutputFolder(outputTarget)).isEmpty()) return result;
    // A script is checked by its interpreter importing torch; the trainer validates its own flags.
    // Under Slurm the flags are validated here for the job's world size, on the CPU (this machine may have no GPU).
    JobSpec validated = job;
    if (job.slurm.enabled) validated.device = QStringLiteral("cpu");
    result.error = job.isScript() ? checkInterpreterHasTorch(job, &result, cancelled)
                                  : validateWithTrainer(result.trainerPath, validated, cancelled);
    if (!result.error.isEmpty()) return result;
    if (job.slurm.enabled) return result; // the rendezvous port follows from the Slurm job id
    if (job.masterPort < 0 || job.masterPort > 65535) {
        result.error = QStringLiteral("--master-port %1: must be in 1..65535, or 0 to pick a free one").arg(job.masterPort);
        return result;
    }
    if (job.masterPort == 0) {
        result.masterPort = pickFreePort();
        if (result.masterPort == 0) result.error = QStringLiteral("no free TCP port on 127.0.0.1 for the rendezvous");
    } else if (!portIsFree(job.masterPort)) {
        result.error = QStringLiteral("--master-port %1 is already in use on this machine: choose another, or 0 to pick a free one")
                           .arg(job.masterPort);
    } else {
        result.masterPort = job.masterPort;
    }
    return result;
}

} // namespace ringmaster::supervisor
