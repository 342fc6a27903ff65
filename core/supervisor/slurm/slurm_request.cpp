#include "supervisor/slurm/slurm_request.h"

#include <QJsonArray>
#include <QRegularExpression>

#include <cmath>

#include "supervisor/job_spec.h"

namespace ringmaster::supervisor {
namespace {

constexpr qint64 kSecondsPerMinute = 60;
constexpr qint64 kSecondsPerHour = 3600;
constexpr qint64 kSecondsPerDay = 86400;

QString keyName(const char* key)
{
    return QStringLiteral("launch.slurm.") + QLatin1String(key);
}

int integer(const QJsonObject& o, const char* key, int fallback, int minimum, int maximum, const QString& origin)
{
    const auto value = o.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull()) return fallback;
    const double number = value.toDouble(std::nan(""));
    if (!value.isDouble() || number != std::floor(number) || number < minimum || number > maximum) {
        throw JobError(QStringLiteral("%1: \"%2\" must be an integer from %3 to %4")
                           .arg(origin, keyName(key)).arg(minimum).arg(maximum));
    }
    return static_cast<int>(number);
}

QString text(const QJsonObject& o, const char* key, const QString& origin)
{
    const auto value = o.value(QLatin1String(key));
    if (value.isUndefined() || value.isNull()) return {};
    if (!value.isString()) throw JobError(QStringLiteral("%1: \"%2\" must be a string").arg(origin, keyName(key)));
    return value.toString().trimmed();
}

// A partition or account name goes onto an #SBATCH line: Slurm's names are words, commas (a list of
// partitions) and a few punctuation marks, never spaces or quotes.
QString name(const QJsonObject& o, const char* key, const QString& origin)
{
    static const QRegularExpression valid(QStringLiteral("^[A-Za-z0-9_.,+-]*$"));
    const QString value = text(o, key, origin);
    if (!valid.match(value).hasMatch()) {
        throw JobError(QStringLiteral("%1: \"%2\" \"%3\" is not a Slurm name (letters, digits, '_', '.', '-', ',' only)")
                           .arg(origin, keyName(key), value));
    }
    return value;
}

// The option an extra argument names ("--mem=64G" -> "mem"), or empty when it is not one long option
// that fits on an #SBATCH line unquoted.
QString longOptionName(const QString& argument)
{
    static const QRegularExpression option(QStringLiteral("^--([A-Za-z][A-Za-z0-9-]*)(=[^\\s\"'#\\\\]*)?$"));
    const auto match = option.match(argument);
    return match.hasMatch() ? match.captured(1) : QString();
}

// What "extra_args" may not set, and the key that sets it instead.
const QList<QPair<QString, QString>>& reservedOptions()
{
    static const QList<QPair<QString, QString>> reserved{
        {QStringLiteral("nodes"), QStringLiteral("launch.slurm.nodes")},
        {QStringLiteral("ntasks-per-node"), QStringLiteral("launch.slurm.ntasks_per_node")},
        {QStringLiteral("ntasks"), QStringLiteral("launch.slurm.ntasks_per_node")},
        {QStringLiteral("gpus-per-node"), QStringLiteral("launch.slurm.gpus_per_node")},
        {QStringLiteral("partition"), QStringLiteral("launch.slurm.partition")},
        {QStringLiteral("time"), QStringLiteral("launch.slurm.time")},
        {QStringLiteral("account"), QStringLiteral("launch.slurm.account")},
        {QStringLiteral("job-name"), QStringLiteral("the run's name")},
        {QStringLiteral("output"), QStringLiteral("the run directory's slurm/ and logs/ folders")},
        {QStringLiteral("error"), QStringLiteral("the run directory's slurm/ and logs/ folders")},
        {QStringLiteral("chdir"), QStringLiteral("the run directory")},
        {QStringLiteral("parsable"), QStringLiteral("Ringmaster's submission")},
        {QStringLiteral("wrap"), QStringLiteral("the batch script")},
    };
    return reserved;
}

// What "extra_args" may set: sbatch options that shape the allocation, schedule or label the job, and touch
// neither what runs, nor where, nor its environment. Matched by full name (sbatch also takes abbreviations).
const QStringList& harmlessOptions()
{
    static const QStringList names{
        QStringLiteral("mem"), QStringLiteral("mem-per-cpu"), QStringLiteral("mem-per-gpu"), QStringLiteral("cpus-per-task"),
        QStringLiteral("cpus-per-gpu"), QStringLiteral("qos"), QStringLiteral("constraint"), QStringLiteral("exclusive"),
        QStringLiteral("reservation"), QStringLiteral("gres"), QStringLiteral("nice"), QStringLiteral("comment"),
        QStringLiteral("mail-type"), QStringLiteral("mail-user"), QStringLiteral("exclude"), QStringLiteral("nodelist"),
        QStringLiteral("begin"), QStringLiteral("deadline"), QStringLiteral("hint"), QStringLiteral("threads-per-core"),
        QStringLiteral("cores-per-socket"), QStringLiteral("sockets-per-node"), QStringLiteral("mincpus"),
        QStringLiteral("tmp"), QStringLiteral("licenses"), QStringLiteral("wckey"), QStringLiteral("priority"),
        QStringLiteral("no-requeue"), QStringLiteral("oversubscribe"), QStringLiteral("switches"),
        QStringLiteral("gpu-bind"), QStringLiteral("gpu-freq"), QStringLiteral("cpu-freq"), QStringLiteral("contiguous"),
        QStringLiteral("signal"),
    };
    return names;
}

// Options refused for what they would do to a Ringmaster run, with the reason.
const QList<QPair<QString, QString>>& refusedOptions()
{
    static const QList<QPair<QString, QString>> refused{
        {QStringLiteral("export"), QStringLiteral("Ringmaster passes the tasks their socket and token through sbatch's "
                                                  "environment; set variables in your shell before you submit")},
        {QStringLiteral("export-file"), QStringLiteral("Ringmaster passes the tasks their socket and token through "
                                                       "sbatch's environment; set variables in your shell before you submit")},
        {QStringLiteral("array"), QStringLiteral("one Ringmaster run is one Slurm job: start one run per configuration")},
        {QStringLiteral("container"), QStringLiteral("the batch script runs the trainer or your interpreter on the node "
                                                     "itself: give a wrapper as --python instead")},
        {QStringLiteral("requeue"), QStringLiteral("a requeued job would start again at step 0: use --max-restarts")},
        {QStringLiteral("distribution"), QStringLiteral("rank 0 must run on the step's first node (the rendezvous "
                                                        "address): leave the distribution to Slurm's default")},
    };
    return refused;
}

} // namespace

const QStringList& slurmOptionsSetByRingmaster()
{
    static const QStringList names = [] {
        QStringList list;
        for (const auto& entry : reservedOptions()) list.append(QStringLiteral("--") + entry.first);
        return list;
    }();
    return names;
}

qint64 slurmTimeSeconds(const QString& text)
{
    const QString t = text.trimmed();
    if (t.compare(QLatin1String("INFINITE"), Qt::CaseInsensitive) == 0 ||
        t.compare(QLatin1String("UNLIMITED"), Qt::CaseInsensitive) == 0) {
        return kSlurmTimeUnlimited;
    }
    // Numbers after the first field are clock fields: minutes and seconds below 60, hours below 24.
    static const QRegularExpression withDays(QStringLiteral("^(\\d{1,5})-(\\d{1,2})(?::(\\d{1,2})(?::(\\d{1,2}))?)?$"));
    static const QRegularExpression clock(QStringLiteral("^(\\d{1,7})(?::(\\d{1,2})(?::(\\d{1,2}))?)?$"));
    auto field = [](const QRegularExpressionMatch& m, int i) { return m.captured(i).isEmpty() ? 0 : m.captured(i).toLongLong(); };
    if (const auto m = withDays.match(t); m.hasMatch()) {
        const qint64 hours = field(m, 2), minutes = field(m, 3), seconds = field(m, 4);
        if (hours >= 24 || minutes >= 60 || seconds >= 60) return kSlurmTimeInvalid;
        return field(m, 1) * kSecondsPerDay + hours * kSecondsPerHour + minutes * kSecondsPerMinute + seconds;
    }
    if (const auto m = clock.match(t); m.hasMatch()) {
        if (m.captured(3).isEmpty()) { // MIN or MIN:SEC
            if (field(m, 2) >= 60) return kSlurmTimeInvalid;
            return field(m, 1) * kSecondsPerMinute + field(m, 2);
        }
        if (field(m, 2) >= 60 || field(m, 3) >= 60) return kSlurmTimeInvalid; // H:MIN:SEC
        return field(m, 1) * kSecondsPerHour + field(m, 2) * kSecondsPerMinute + field(m, 3);
    }
    return kSlurmTimeInvalid;
}

QJsonObject SlurmRequest::toJson() const
{
    if (!enabled) return {};
    QJsonObject object{
        {QStringLiteral("nodes"), nodes},
        {QStringLiteral("ntasks_per_node"), ntasksPerNode},
        {QStringLiteral("gpus_per_node"), gpusPerNode},
        {QStringLiteral("partition"), partition},
        {QStringLiteral("time"), time},
        {QStringLiteral("account"), account},
        {QStringLiteral("extra_args"), QJsonArray::fromStringList(extraArgs)},
        {QStringLiteral("metrics"), metrics},
    };
    if (!jobId.isEmpty()) object.insert(QStringLiteral("job_id"), jobId);
    return object;
}

const QStringList& slurmMetricsPaths()
{
    static const QStringList paths{QStringLiteral("auto"), QStringLiteral("tcp"), QStringLiteral("files")};
    return paths;
}

SlurmRequest SlurmRequest::fromJson(const QJsonValue& value, const QString& origin)
{
    SlurmRequest request;
    if (value.isUndefined() || value.isNull()) return request;
    if (!value.isObject()) {
        throw JobError(QStringLiteral("%1: \"launch.slurm\" must be an object, e.g. {\"nodes\": 1, \"partition\": \"debug\"}").arg(origin));
    }
    const QJsonObject o = value.toObject();
    static const QStringList known{QStringLiteral("nodes"), QStringLiteral("ntasks_per_node"), QStringLiteral("gpus_per_node"),
                                   QStringLiteral("partition"), QStringLiteral("time"), QStringLiteral("account"),
                                   QStringLiteral("extra_args"), QStringLiteral("job_id"), QStringLiteral("metrics")};
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!known.contains(it.key())) {
            throw JobError(QStringLiteral("%1: unknown key \"launch.slurm.%2\" (known: %3)")
                               .arg(origin, it.key(), known.join(QStringLiteral(", "))));
        }
    }
    request.enabled = true;
    request.nodes = integer(o, "nodes", request.nodes, 1, kMaxSlurmNodes, origin);
    request.ntasksPerNode = integer(o, "ntasks_per_node", request.ntasksPerNode, 0, kMaxSlurmTasksPerNode, origin);
    request.gpusPerNode = integer(o, "gpus_per_node", request.gpusPerNode, 0, kMaxSlurmGpusPerNode, origin);
    request.partition = name(o, "partition", origin);
    request.account = name(o, "account", origin);
    request.time = text(o, "time", origin);
    request.jobId = name(o, "job_id", origin);
    if (const QString metrics = text(o, "metrics", origin); !metrics.isEmpty()) {
        if (!slurmMetricsPaths().contains(metrics)) {
            throw JobError(QStringLiteral("%1: \"launch.slurm.metrics\" \"%2\" is not one of %3")
                               .arg(origin, metrics, slurmMetricsPaths().join(QStringLiteral(", "))));
        }
        request.metrics = metrics;
    }
    if (!request.time.isEmpty() && slurmTimeSeconds(request.time) == kSlurmTimeInvalid) {
        throw JobError(QStringLiteral("%1: \"launch.slurm.time\" \"%2\" is not a Slurm time limit: use MINUTES, "
                                      "HOURS:MINUTES:SECONDS or DAYS-HOURS[:MINUTES[:SECONDS]], e.g. \"0-02:00:00\"")
                           .arg(origin, request.time));
    }
    const auto extra = o.value(QStringLiteral("extra_args"));
    if (!extra.isUndefined() && !extra.isNull()) {
        if (!extra.isArray()) {
            throw JobError(QStringLiteral("%1: \"launch.slurm.extra_args\" must be a list of strings, e.g. [\"--mem=64G\"]").arg(origin));
        }
        const QJsonArray items = extra.toArray();
        for (int i = 0; i < items.size(); ++i) {
            const QString where = QStringLiteral("launch.slurm.extra_args[%1]").arg(i);
            if (!items.at(i).isString()) throw JobError(QStringLiteral("%1: \"%2\" must be a string").arg(origin, where));
            const QString argument = items.at(i).toString();
            const QString option = longOptionName(argument);
            if (option.isEmpty()) {
                throw JobError(QStringLiteral("%1: \"%2\" \"%3\" must be one long sbatch option such as \"--mem=64G\" "
                                              "(no spaces, quotes, '#' or backslashes)")
                                   .arg(origin, where, argument));
            }
            for (const auto& reserved : reservedOptions()) {
                // sbatch takes any unambiguous abbreviation too ("--part=gpu").
                if (reserved.first.startsWith(option)) {
                    throw JobError(QStringLiteral("%1: \"%2\" \"%3\" is set by Ringmaster: use %4 instead")
                                       .arg(origin, where, argument, reserved.second));
                }
            }
            for (const auto& refused : refusedOptions()) {
                if (refused.first.startsWith(option)) {
                    throw JobError(QStringLiteral("%1: \"%2\" \"%3\" is refused: %4").arg(origin, where, argument, refused.second));
                }
            }
            if (option == QLatin1String("gres") && argument.mid(7).startsWith(QLatin1String("gpu"))) {
                throw JobError(QStringLiteral("%1: \"%2\" \"%3\" asks for GPUs: use launch.slurm.gpus_per_node instead")
                                   .arg(origin, where, argument));
            }
            if (!harmlessOptions().contains(option)) {
                throw JobError(QStringLiteral("%1: \"%2\" \"%3\" is not one of the sbatch options a job file may add "
                                              "(%4); write it out in full, or edit slurm/job.sbatch and submit it by hand")
                                   .arg(origin, where, argument, harmlessOptions().join(QStringLiteral(", "))));
            }
            request.extraArgs.append(argument);
        }
    }
    return request;
}

} // namespace ringmaster::supervisor
