#include "supervisor/rank_command.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QThread>

#include <algorithm>

#include "protocol/wire.h"
#include "supervisor/script_environment.h"

namespace ringmaster::supervisor {
namespace {

constexpr char kMasterAddress[] = "127.0.0.1";

void set(QProcessEnvironment& environment, const char* name, const QString& value)
{
    environment.insert(QString::fromLatin1(name), value);
}

void set(QProcessEnvironment& environment, const char* name, qint64 value)
{
    set(environment, name, QString::number(value));
}

void setUnlessGiven(QProcessEnvironment& environment, const QProcessEnvironment& base, const char* name,
                    const QString& value)
{
    if (!base.contains(QString::fromLatin1(name))) set(environment, name, value);
}

} // namespace

LaunchPolicy launchPolicy(const JobSpec& job)
{
    LaunchPolicy policy;
    if (!job.isScript()) {
        policy.hangTimeoutSec = job.heartbeatTimeoutSec;
        policy.silenceWord = QStringLiteral("stopped heartbeating");
        return policy;
    }
    policy.heartbeatsOverSocket = false;
    policy.outputIsProgress = true;
    policy.groupWideProgress = true;
    policy.hangTimeoutSec = job.heartbeatTimeoutGiven ? job.heartbeatTimeoutSec : 0.0;
    policy.trainerExitCodes = false;
    policy.completesOnCleanExit = true;
    policy.programWritesSummary = false;
    policy.silenceWord = QStringLiteral("printed nothing");
    return policy;
}

QString trainerResumeTarget(const JobSpec& job, int restartCount, const QString& runDir, const QString& latestCheckpoint)
{
    if (job.isScript() || latestCheckpoint.isEmpty() || (restartCount == 0 && job.resume.isEmpty())) return {};
    const bool ownTimeline = job.resume.isEmpty() || restartCount > 0 || QFileInfo(job.resume).isDir();
    return ownTimeline ? runDir : job.resume;
}

RankCommand commandFor(const JobSpec& job, const PreflightResult& checked, int rank, const LaunchContext& context,
                       const QProcessEnvironment& base)
{
    const int world = job.worldSize();
    const int cores = std::max(1, QThread::idealThreadCount());
    RankCommand command;
    auto& env = command.environment;
    env = base;
    // torchrun's contract (one node: local ranks are ranks).
    set(env, "RANK", rank);
    set(env, "LOCAL_RANK", rank);
    set(env, "WORLD_SIZE", world);
    set(env, "LOCAL_WORLD_SIZE", world);
    set(env, "MASTER_ADDR", QString::fromLatin1(kMasterAddress));
    set(env, "MASTER_PORT", context.masterPort);
    set(env, protocol::kSocketEnv, context.socketPath);
    set(env, protocol::kTokenEnv, context.token);
    set(env, "RINGMASTER_RUN_DIR", context.runDir);
    if (job.device == QLatin1String("cuda")) {
        // NVML's numbering (PCI bus order), which the GPU panel and --gpus use; see gpu_placement.h.
        set(env, "CUDA_DEVICE_ORDER", QStringLiteral("PCI_BUS_ID"));
        set(env, "CUDA_VISIBLE_DEVICES", checked.visibleDevices);
        for (const auto& [name, value] : ncclTraceEnvironment(context.runDir)) {
            if (!base.contains(name)) env.insert(name, value);
        }
    }
    const QString threads = QString::number(std::max(1, cores / world));
    if (!job.isScript()) {
        set(env, "OMP_NUM_THREADS", threads);
        command.program = checked.trainerPath;
        command.arguments = QStringList{QStringLiteral("--job"), context.jobFile, QStringLiteral("--out"), context.runDir,
                                        QStringLiteral("--device"), job.device};
        if (!context.resumeFrom.isEmpty()) command.arguments << QStringLiteral("--resume") << context.resumeFrom;
        return command;
    }
    // The rest of what torchrun gives each worker, so that a script written for it runs unchanged.
    setUnlessGiven(env, base, "OMP_NUM_THREADS", threads);
    set(env, "GROUP_RANK", 0);
    set(env, "GROUP_WORLD_SIZE", 1);
    set(env, "ROLE_NAME", QStringLiteral("default"));
    set(env, "ROLE_RANK", rank);
    set(env, "ROLE_WORLD_SIZE", world);
    set(env, "TORCHELASTIC_RESTART_COUNT", context.restartCount);
    set(env, "TORCHELASTIC_MAX_RESTARTS", job.maxRestarts);
    set(env, "TORCHELASTIC_RUN_ID", QFileInfo(context.runDir).fileName());
    set(env, kErrorFileVariable, errorFileOf(context.runDir, QString::number(rank)));
    set(env, kStacksFileVariable, stacksFileOf(context.runDir, QString::number(rank)));
    set(env, kStacksSignalVariable, pythonStacksSignal());
    for (const auto& [name, value] : scriptDefaultsFor(job.device)) setUnlessGiven(env, base, name, QString::fromLatin1(value));
    set(env, "PYTHONUNBUFFERED", QStringLiteral("1")); // lines reach the logs (and the hang timer) as printed
    // `import ringmaster` (the helper module) works without installing anything.
    const QString helper = helperModuleDir();
    if (!helper.isEmpty()) {
        const QString inherited = base.value(QStringLiteral("PYTHONPATH"));
        env.insert(QStringLiteral("PYTHONPATH"), inherited.isEmpty() ? helper : helper + QLatin1Char(':') + inherited);
    }
    command.program = checked.interpreterPath;
    command.arguments = QStringList{checked.scriptPath} + job.scriptArgs;
    return command;
}

QString helperModuleDir()
{
    const QString given = qEnvironmentVariable("RINGMASTER_PYTHON_DIR");
    if (!given.isEmpty()) return given;
    // Installed: PREFIX/bin/ringmaster-launch beside PREFIX/share/ringmaster/python.
    const QString installed = QCoreApplication::applicationDirPath() + QStringLiteral("/../share/ringmaster/python");
    if (QFileInfo::exists(installed + QStringLiteral("/ringmaster/__init__.py"))) return QDir::cleanPath(installed);
    // A build tree: the source's python/ folder.
    const QString source = QStringLiteral(RINGMASTER_PYTHON_SOURCE_DIR);
    return QFileInfo::exists(source + QStringLiteral("/ringmaster/__init__.py")) ? source : QString();
}

QString describeCommand(const RankCommand& command)
{
    return (QStringList{command.program} + command.arguments).join(QLatin1Char(' '));
}

QJsonObject launchRecord(const QList<RankCommand>& commands, int restartCount, const QProcessEnvironment& base,
                         const QJsonObject& hardware)
{
    QJsonArray ranks;
    for (int r = 0; r < commands.size(); ++r) {
        const RankCommand& command = commands.at(r);
        QJsonObject environment;
        for (const QString& key : command.environment.keys()) {
            const QString value = command.environment.value(key);
            if (base.contains(key) && base.value(key) == value) continue; // inherited unchanged
            environment.insert(key, key == QLatin1String(protocol::kTokenEnv) ? QStringLiteral("(secret)") : value);
        }
        ranks.append(QJsonObject{{QStringLiteral("rank"), r},
                                 {QStringLiteral("program"), command.program},
                                 {QStringLiteral("arguments"), QJsonArray::fromStringList(command.arguments)},
                                 {QStringLiteral("environment"), environment}});
    }
    QJsonObject record{{QStringLiteral("restart"), restartCount}, {QStringLiteral("ranks"), ranks}};
    if (!hardware.isEmpty()) record.insert(QStringLiteral("hardware"), hardware);
    return record;
}

QJsonObject hardwareRecord(const PreflightResult& checked)
{
    if (checked.gpus.isEmpty()) return {};
    auto textOrNull = [](const QString& text) { return text.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(text); };
    QJsonArray gpus;
    for (int rank = 0; rank < checked.gpus.size(); ++rank) {
        gpus.append(QJsonObject{{QStringLiteral("rank"), rank},
                                {QStringLiteral("index"), checked.gpus.at(rank)},
                                {QStringLiteral("name"), textOrNull(checked.gpuNames.value(rank))}});
    }
    return QJsonObject{{QStringLiteral("gpus"), gpus}, {QStringLiteral("driver_version"), textOrNull(checked.driverVersion)}};
}

} // namespace ringmaster::supervisor
