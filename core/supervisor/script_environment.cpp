#include "script_environment.h"

#include <csignal>

namespace ringmaster::supervisor {

QString errorFileOf(const QString& runDir, const QString& rank)
{
    return runDir + QStringLiteral("/logs/error-rank-") + rank + QStringLiteral(".json");
}

int pythonStacksSignal()
{
    return SIGRTMIN + 2;
}

QString stacksFileOf(const QString& runDir, const QString& rank)
{
    return runDir + QStringLiteral("/logs/rank-") + rank + QStringLiteral(".stacks.txt");
}

QString ncclTraceStemOf(const QString& runDir)
{
    return runDir + QStringLiteral("/logs/nccl-trace-rank-");
}

QList<QPair<QString, QString>> ncclTraceEnvironment(const QString& runDir)
{
    return {{QString::fromLatin1(kNcclDumpOnTimeoutVariable), QStringLiteral("1")},
            {QString::fromLatin1(kNcclTraceFileVariable), ncclTraceStemOf(runDir)},
            {QString::fromLatin1(kNcclTracePipeVariable), ncclTraceStemOf(runDir)}};
}

QList<EnvironmentDefault> scriptDefaultsFor(const QString& device)
{
    QList<EnvironmentDefault> defaults(std::begin(kTorchrunDefaults), std::end(kTorchrunDefaults));
    if (device == QLatin1String("cpu")) defaults.append(QList<EnvironmentDefault>(std::begin(kCpuRunDefaults), std::end(kCpuRunDefaults)));
    return defaults;
}

} // namespace ringmaster::supervisor
