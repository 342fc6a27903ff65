#include "supervisor/job_spec.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QSaveFile>

#include <cmath>

#include "protocol/run_layout.h"
#include "supervisor/control_characters.h"
#include "supervisor/slurm/batch_script.h"
#include "supervisor/trainer_flags.h"

namespace ringmaster::supervisor {
namespace {

constexpr double kLargestExactInteger = 9007199254740992.0; // 2^53: every integer below is a double exactly

double number(const QJsonObject& o, const char* key, double fallback, const QString& origin)
{
    const auto value = o.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull()) return fallback;
    if (!value.isDouble()) {
        throw JobError(QStringLiteral("%1: \"launch.%2\" must be a number").arg(origin, QLatin1String(key)));
    }
    return value.toDouble();
}

int integer(const QJsonObject& o, const char* key, int fallback, int minimum, int maximum, const QString& origin)
{
    const auto value = o.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull()) return fallback;
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || number != std::floor(number) || number < minimum || number > maximum) {
        throw JobError(QStringLiteral("%1: \"launch.%2\" must be an integer from %3 to %4")
                           .arg(origin, QLatin1String(key)).arg(minimum).arg(maximum));
    }
    return static_cast<int>(number);
}

QString text(const QJsonObject& o, const char* key, const QString& fallback, const QString& origin)
{
    const auto value = o.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull()) return fallback;
    if (!value.isString()) {
        throw JobError(QStringLiteral("%1: \"launch.%2\" must be a string").arg(origin, QLatin1String(key)));
    }
    return value.toString();
}

QStringList stringList(const QJsonObject& o, const char* key, const QString& origin)
{
    const auto value = o.value(QLatin1String(key));
    QStringList list;
    if (value.isUndefined() || value.isNull()) return list;
    bool strings = value.isArray();
    for (const auto& item : value.toArray()) {
        strings = strings && item.isString();
        list.append(item.toString());
    }
    if (!strings) throw JobError(QStringLiteral("%1: \"launch.%2\" must be a list of strings").arg(origin, QLatin1String(key)));
    return list;
}

} // namespace

int JobSpec::worldSize() const
{
    if (slurm.enabled) return slurm.nodes * slurmTasksPerNode(*this, slurm);
    if (device == QLatin1String("cuda") && !gpus.isEmpty()) return static_cast<int>(gpus.size());
    return nproc;
}

QJsonObject JobSpec::toJson() const
{
    QJsonArray gpuArray;
    for (const int gpu : gpus) gpuArray.append(gpu);
    QJsonObject launch{
        {QStringLiteral("device"), device},
        {QStringLiteral("nproc"), nproc},
        {QStringLiteral("gpus"), gpuArray},
        {QStringLiteral("output_root"), outputRoot},
        {QStringLiteral("run_dir"), runDir},
        {QStringLiteral("master_port"), masterPort},
        {QStringLiteral("max_restarts"), maxRestarts},
        {QStringLiteral("grace_period"), gracePeriodSec},
        {QStringLiteral("resume"), resume},
        {QStringLiteral("trainer_path"), trainerPath},
    };
    // A script's hang detection stays off unless a timeout was given: saving must not turn it on.
    if (!isScript() || heartbeatTimeoutGiven) launch.insert(QStringLiteral("heartbeat_timeout"), heartbeatTimeoutSec);
    if (stragglerAfterSec != kDefaultStragglerAfterSec) launch.insert(QStringLiteral("straggler_after"), stragglerAfterSec);
    if (isScript()) launch.insert(QStringLiteral("script"), script);
    if (isScript() || !scriptArgs.isEmpty()) launch.insert(QStringLiteral("script_args"), QJsonArray::fromStringList(scriptArgs));
    if (isScript() || python != QLatin1String(kDefaultPython)) launch.insert(QStringLiteral("python"), python);
    if (!metricPatterns.isEmpty()) launch.insert(QStringLiteral("metric_patterns"), QJsonArray::fromStringList(metricPatterns));
    if (!tensorboardDir.isEmpty()) launch.insert(QStringLiteral("tensorboard_dir"), tensorboardDir);
    if (slurm.enabled) launch.insert(QStringLiteral("slurm"), slurm.toJson());
    QJsonObject object{{QStringLiteral("version"), kJobFormatVersion}, {QStringLiteral("launch"), launch}};
    if (!isScript() || !trainer.isEmpty()) object.insert(QStringLiteral("trainer"), trainer);
    return object;
}

QString JobSpec::runName() const
{
    if (isScript()) return QFileInfo(script).completeBaseName();
    return QFileInfo(trainerOption(QStringLiteral("model"), trainerDefault("model").toString())).completeBaseName();
}

JobSpec JobSpec::fromJson(const QJsonObject& object, const QString& origin)
{
    const auto versionValue = object.value(QStringLiteral("version"));
    if (!versionValue.isUndefined() && (!versionValue.isDouble() || versionValue.toDouble() != kJobFormatVersion)) {
        throw JobError(QStringLiteral("%1: job format version %2 is not supported (this Ringmaster reads version %3)")
                           .arg(origin, versionValue.isDouble() ? flagValueText(versionValue) : QStringLiteral("(not a number)"))
                           .arg(kJobFormatVersion));
    }
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (it.key() != QLatin1String("version") && it.key() != QLatin1String("launch") &&
            it.key() != QLatin1String("trainer")) {
            throw JobError(QStringLiteral("%1: unknown top-level key \"%2\" (expected version, launch, trainer)")
                               .arg(origin, it.key()));
        }
    }
    JobSpec job;
    const auto launchValue = object.value(QStringLiteral("launch"));
    if (!launchValue.isUndefined() && !launchValue.isObject()) {
        throw JobError(QStringLiteral("%1: \"launch\" must be an object").arg(origin));
    }
    const auto launch = launchValue.toObject();
    static const QStringList known{QStringLiteral("device"), QStringLiteral("nproc"), QStringLiteral("gpus"),
                                   QStringLiteral("output_root"), QStringLiteral("run_dir"),
                                   QStringLiteral("master_port"), QStringLiteral("max_restarts"),
                                   QStringLiteral("heartbeat_timeout"), QStringLiteral("grace_period"),
                                   QStringLiteral("straggler_after"), QStringLiteral("resume"), QStringLiteral("trainer_path"), QStringLiteral("script"),
                                   QStringLiteral("script_args"), QStringLiteral("python"),
                                   QStringLiteral("metric_patterns"), QStringLiteral("tensorboard_dir"), QStringLiteral("slurm")};
    for (auto it = launch.begin(); it != launch.end(); ++it) {
        if (!known.contains(it.key())) {
            throw JobError(QStringLiteral("%1: unknown key \"launch.%2\" (known: %3)")
                               .arg(origin, it.key(), known.join(QStringLiteral(", "))));
        }
    }
    job.device = text(launch, "device", job.device, origin);
    job.nproc = integer(launch, "nproc", job.nproc, 1, kMaxJobRanks, origin);
    const auto gpus = launch.value(QStringLiteral("gpus"));
    if (!gpus.isUndefined() && !gpus.isNull()) {
        if (!gpus.isArray()) throw JobError(QStringLiteral("%1: \"launch.gpus\" must be a list of GPU indices").arg(origin));
        for (const auto& gpu : gpus.toArray()) {
            const double index = gpu.toDouble(-1);
            if (!gpu.isDouble() || index != std::floor(index) || index < 0 || index >= kMaxJobRanks) {
                throw JobError(QStringLiteral("%1: \"launch.gpus\" must hold GPU indices (integers >= 0), not %2")
                                   .arg(origin, QString::fromUtf8(QJsonDocument(QJsonArray{gpu}).toJson(QJsonDocument::Compact)).mid(1).chopped(1)));
            }
            job.gpus.append(static_cast<int>(index));
        }
    }
    job.outputRoot = text(launch, "output_root", job.outputRoot, origin);
    job.runDir = text(launch, "run_dir", job.runDir, origin);
    job.masterPort = integer(launch, "master_port", job.masterPort, 0, 65535, origin);
    job.maxRestarts = integer(launch, "max_restarts", job.maxRestarts, 0, kMaxRestarts, origin);
    job.heartbeatTimeoutSec = number(launch, "heartbeat_timeout", job.heartbeatTimeoutSec, origin);
    job.heartbeatTimeoutGiven = launch.contains(QStringLiteral("heartbeat_timeout")) && !launch.value(QStringLiteral("heartbeat_timeout")).isNull();
    job.gracePeriodSec = number(launch, "grace_period", job.gracePeriodSec, origin);
    job.stragglerAfterSec = number(launch, "straggler_after", job.stragglerAfterSec, origin);
    job.resume = text(launch, "resume", job.resume, origin);
    job.trainerPath = text(launch, "trainer_path", job.trainerPath, origin);
    job.trainerPathFromFile = !job.trainerPath.isEmpty();
    job.script = text(launch, "script", job.script, origin);
    job.python = text(launch, "python", job.python, origin);
    job.pythonFromFile = launch.contains(QStringLiteral("python"));
    if (job.python.isEmpty()) {
        throw JobError(QStringLiteral("%1: \"launch.python\" must name an interpreter, e.g. \"%2\"").arg(origin, QLatin1String(kDefaultPython)));
    }
    job.scriptArgs = stringList(launch, "script_args", origin);
    job.metricPatterns = stringList(launch, "metric_patterns", origin);
    job.tensorboardDir = text(launch, "tensorboard_dir", job.tensorboardDir, origin);
    job.slurm = SlurmRequest::fromJson(launch.value(QStringLiteral("slurm")), origin);
    for (const char* key : {"script_args", "metric_patterns", "tensorboard_dir"}) {
        const auto value = launch.value(QLatin1String(key));
        const bool given = value.isArray() ? !value.toArray().isEmpty() : value.isString() && !value.toString().isEmpty();
        if (given && !job.isScript()) {
            throw JobError(QStringLiteral("%1: \"launch.%2\" is for a script and is given without \"launch.script\": name the script too")
                               .arg(origin, QLatin1String(key)));
        }
    }
    const auto trainerValue = object.value(QStringLiteral("trainer"));
    if (!trainerValue.isUndefined() && !trainerValue.isObject()) {
        throw JobError(QStringLiteral("%1: \"trainer\" must be an object of trainer flags").arg(origin));
    }
    const QJsonObject trainer = trainerValue.toObject();
    for (auto it = trainer.begin(); it != trainer.end(); ++it) {
        if (it.value().isArray() || it.value().isObject() || it.value().isNull()) {
            throw JobError(QStringLiteral("%1: \"trainer.%2\" must be a number, a string or true/false").arg(origin, it.key()));
        }
        job.trainer.insert(trainerKeyOf(it.key()), it.value());
    }
    if (job.isScript() && !job.trainer.isEmpty()) {
        throw JobError(QStringLiteral("%1: \"trainer\" flags cannot be used with \"launch.script\" (they belong to "
                                      "ringmaster-trainer): remove them, or pass the script its own \"launch.script_args\"")
                           .arg(origin));
    }
    if (const QString problem = controlCharacterProblem(job); !problem.isEmpty()) {
        throw JobError(QStringLiteral("%1: %2").arg(origin, problem));
    }
    return job;
}

JobSpec JobSpec::load(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        throw JobError(QStringLiteral("job file %1 cannot be read: %2").arg(path, file.errorString()));
    }
    QJsonParseError error{};
    const auto doc = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError) {
        throw JobError(QStringLiteral("job file %1 is not valid JSON at offset %2: %3")
                           .arg(path).arg(error.offset).arg(error.errorString()));
    }
    if (!doc.isObject()) throw JobError(QStringLiteral("job file %1 must hold a JSON object").arg(path));
    return fromJson(doc.object(), QStringLiteral("job file ") + path);
}

void JobSpec::save(const QString& path) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        throw JobError(QStringLiteral("cannot write job file %1: %2").arg(path, file.errorString()));
    }
    file.write(QJsonDocument(toJson()).toJson(QJsonDocument::Indented));
    if (!file.commit()) throw JobError(QStringLiteral("cannot write job file %1: %2").arg(path, file.errorString()));
}

void JobSpec::setTrainerOption(const QString& flag, const QJsonValue& value)
{
    trainer.insert(trainerKeyOf(flag), value);
}

QString JobSpec::trainerOption(const QString& flag, const QString& fallback) const
{
    const auto value = trainer.value(trainerKeyOf(flag));
    if (value.isString()) return value.toString();
    if (value.isDouble() || value.isBool()) return flagValueText(value);
    return fallback;
}

QString flagValueText(const QJsonValue& value)
{
    if (value.isBool()) return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (!value.isDouble()) return value.toString();
    const double number = value.toDouble();
    if (number == std::floor(number) && std::fabs(number) < kLargestExactInteger) {
        return QString::number(static_cast<qint64>(number));
    }
    return QString::number(number, 'g', QLocale::FloatingPointShortest);
}

QString JobSpec::fileOfRun(const QString& runDir)
{
    return runDir + QLatin1Char('/') + QLatin1String(protocol::kJobFile);
}

JobSpec JobSpec::forNewLaunch() const
{
    JobSpec job = *this;
    job.runDir.clear();
    job.masterPort = 0;
    job.trainerPath.clear();
    job.trainerPathFromFile = false;
    job.resume.clear();
    job.slurm.jobId.clear(); // a new submission gets its own
    return job;
}

JobSpec JobSpec::forResume(const QString& target) const
{
    JobSpec job = forNewLaunch();
    job.resume = target;
    return job;
}

QString runDirectoryOf(const QString& resumeTarget)
{
    const QFileInfo target(resumeTarget);
    if (target.isDir()) return QDir::cleanPath(target.absoluteFilePath());
    if (target.isFile()) return QDir::cleanPath(target.absoluteDir().absolutePath() + QStringLiteral("/.."));
    return {};
}

JobSpec defaultJob(int gpuCount)
{
    JobSpec job;
    if (gpuCount > 0) {
        job.device = QStringLiteral("cuda");
        for (int i = 0; i < gpuCount; ++i) job.gpus.append(i);
        job.nproc = gpuCount;
    }
    // What a new job spells out (the rest stays the trainer's default), at the table's defaults.
    for (const char* key : {"model", "data", "epochs", "batch_size", "lr", "optimizer", "momentum"}) {
        job.trainer.insert(QLatin1String(key), trainerDefault(key));
    }
    return job;
}

} // namespace ringmaster::supervisor
