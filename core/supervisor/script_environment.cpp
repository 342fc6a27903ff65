#include "supervisor/script_environment.h"

#include <csignal>

#include "protocol/run_layout.h"

namespace ringmaster::supervisor {

QString errorFileOf(const QString& runDir, const QString& rank)
{
    return runDir + QLatin1Char('/') + QString::fromStdString(protocol::rankErrorFile(rank.toStdString()));
}

int pythonStacksSignal()
{
    return SIGRTMIN + 2;
}

QString stacksFileOf(const QString& runDir, const QString& rank)
{
    return runDir + QLatin1Char('/') + QString::fromStdString(protocol::rankStacksFile(rank.toStdString()));
}

QString ncclTraceStemOf(const QString& runDir)
{
    return runDir + QLatin1Char('/') + QLatin1String(protocol::kNcclTracePrefix);
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
