#include "script_environment.h"

namespace ringmaster::supervisor {

QString errorFileOf(const QString& runDir, const QString& rank)
{
    return runDir + QStringLiteral("/logs/error-rank-") + rank + QStringLiteral(".json");
}

QList<EnvironmentDefault> scriptDefaultsFor(const QString& device)
{
    QList<EnvironmentDefault> defaults(std::begin(kTorchrunDefaults), std::end(kTorchrunDefaults));
    if (device == QLatin1String("cpu")) defaults.append(QList<EnvironmentDefault>(std::begin(kCpuRunDefaults), std::end(kCpuRunDefaults)));
    return defaults;
}

} // namespace ringmaster::supervisor
