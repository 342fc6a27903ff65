#include "runs/environment_info.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSysInfo>
#include <QtGlobal>

#include "runs/run_files.h"

namespace ringmaster::runs {
namespace {

QJsonObject readObject(const QDir& dir, const char* fileName)
{
    QFile file(dir.filePath(QString::fromLatin1(fileName)));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

// The first of KEYS that SOURCE holds, else null.
QJsonValue firstOf(const QJsonObject& source, std::initializer_list<const char*> keys)
{
    for (const char* key : keys) {
        const QJsonValue value = source.value(QString::fromLatin1(key));
        if (!value.isUndefined() && !value.isNull()) return value;
    }
    return QJsonValue(QJsonValue::Null);
}

QJsonValue ranksOf(const QJsonObject& commands)
{
    const QJsonValue ranks = commands.value(QStringLiteral("ranks"));
    return ranks.isArray() ? ranks : QJsonValue(QJsonValue::Null);
}

// The names of the GPUs the ranks got, rank by rank, from commands.json's "hardware" (rank_command.h
// hardwareRecord); null when the launcher recorded none (a CPU run, no NVML, an older run).
QJsonValue gpuNamesOf(const QJsonObject& hardware)
{
    QJsonArray names;
    for (const QJsonValue& gpu : hardware.value(QStringLiteral("gpus")).toArray()) {
        const QJsonValue name = gpu.toObject().value(QStringLiteral("name"));
        if (name.isString()) names.append(name);
    }
    return names.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(names);
}

} // namespace

QString ringmasterVersion()
{
    return QStringLiteral(RINGMASTER_VERSION);
}

QJsonObject environmentOf(const QString& runDir)
{
    const QDir dir(runDir);
    const QJsonObject summary = readObject(dir, kSummaryFile);
    const QJsonObject job = readObject(dir, kJobFile);
    const QJsonObject launch = job.value(QStringLiteral("launch")).toObject();
    const QJsonObject commands = readObject(dir, kCommandsFile);
    const QJsonObject hardware = commands.value(QStringLiteral("hardware")).toObject();

    QJsonObject environment{
        {QStringLiteral("ringmaster_version"), ringmasterVersion()},
        {QStringLiteral("qt_version"), QString::fromLatin1(qVersion())},
        {QStringLiteral("host"), QSysInfo::machineHostName()},
        {QStringLiteral("os"), QSysInfo::prettyProductName()},
        {QStringLiteral("kernel"), QString(QSysInfo::kernelType() + QLatin1Char(' ') + QSysInfo::kernelVersion())},
        {QStringLiteral("cpu_architecture"), QSysInfo::currentCpuArchitecture()},
        {QStringLiteral("bundled_at"), QDateTime::currentDateTime().toOffsetFromUtc(QDateTime::currentDateTime().offsetFromUtc()).toString(Qt::ISODate)},
    };
    const QJsonObject run{
        {QStringLiteral("device"), firstOf(summary, {"device"})},
        {QStringLiteral("backend"), firstOf(summary, {"backend"})},
        {QStringLiteral("world_size"), firstOf(summary, {"world_size"})},
        {QStringLiteral("gpus"), firstOf(launch, {"gpus"})},
        {QStringLiteral("gpu_names"), gpuNamesOf(hardware)},
        {QStringLiteral("libtorch_version"), firstOf(summary, {"libtorch_version", "torch_version"})},
        {QStringLiteral("cuda_version"), firstOf(summary, {"cuda_version"})},
        {QStringLiteral("nccl_version"), firstOf(summary, {"nccl_version"})},
        {QStringLiteral("driver_version"), firstOf(hardware, {"driver_version"})},
        {QStringLiteral("script"), firstOf(launch, {"script"})},
        {QStringLiteral("python"), firstOf(launch, {"python"})},
        {QStringLiteral("trainer_path"), firstOf(launch, {"trainer_path"})},
    };
    environment.insert(QStringLiteral("run"), run);
    // [{"rank": 0, "program": "/path", "arguments": [...]}, ...] as the launcher recorded them, or null.
    environment.insert(QStringLiteral("rank_commands"), ranksOf(commands));
    return environment;
}

} // namespace ringmaster::runs
