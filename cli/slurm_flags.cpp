#include "cli/slurm_flags.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QRegularExpression>

namespace ringmaster::supervisor {
namespace {

struct FlagKey
{
    const char* flag;
    const char* key;
    bool integer;
};

constexpr FlagKey kFlags[] = {
    {"--nodes", "nodes", true},       {"--ntasks-per-node", "ntasks_per_node", true},
    {"--gpus-per-node", "gpus_per_node", true}, {"--partition", "partition", false},
    {"--time", "time", false},        {"--account", "account", false},
    {"--slurm-metrics", "metrics", false},
};

} // namespace

QString slurmUsage()
{
    return QStringLiteral(
        "Slurm (the job runs as one Slurm batch job; see docs/slurm.md):\n"
        "  --slurm                 submit to Slurm with sbatch instead of starting the ranks here\n"
        "  --nodes N               nodes (default 1)\n"
        "  --ntasks-per-node N     ranks per node (default: one per GPU on cuda, else --nproc)\n"
        "  --gpus-per-node G       GPUs per node (cuda jobs; default 0)\n"
        "  --partition P           the partition (default: the cluster's default)\n"
        "  --time D-HH:MM:SS       the time limit (default: the partition's)\n"
        "  --account A             the account to charge\n"
        "  --slurm-arg ARG         (repeatable) one more sbatch option, e.g. --slurm-arg=--mem=64G\n"
        "  --slurm-metrics M       how live metrics come back: auto (this host's socket, else TCP, else\n"
        "                          metrics.csv; default), tcp (TCP only), files (metrics.csv only)\n"
        "  --attach RUN_DIR        follow again a run Slurm is still running (its launcher exited)\n");
}

bool SlurmFlags::take(const QString& flag, const QString& value)
{
    if (flag == QLatin1String("--slurm-arg")) {
        m_given << flag;
        m_extraArgs << value;
        return true;
    }
    for (const FlagKey& entry : kFlags) {
        if (flag != QLatin1String(entry.flag)) continue;
        m_given << flag;
        if (entry.integer) {
            bool ok = false;
            const int number = value.toInt(&ok);
            if (!ok) throw JobError(QStringLiteral("%1 %2: expected an integer").arg(flag, value));
            m_values.insert(QLatin1String(entry.key), number);
        } else {
            m_values.insert(QLatin1String(entry.key), value);
        }
        return true;
    }
    return false;
}

void SlurmFlags::applyTo(JobSpec* job) const
{
    if (!m_enabled && !job->slurm.enabled) {
        if (!m_given.isEmpty()) {
            throw JobError(QStringLiteral("%1 describes a Slurm job: add --slurm to submit the job to Slurm").arg(m_given.first()));
        }
        return;
    }
    QJsonObject request = job->slurm.enabled ? job->slurm.toJson() : QJsonObject();
    request.remove(QStringLiteral("job_id")); // a new submission gets its own
    for (auto it = m_values.begin(); it != m_values.end(); ++it) request.insert(it.key(), it.value());
    if (!m_extraArgs.isEmpty()) request.insert(QStringLiteral("extra_args"), QJsonArray::fromStringList(m_extraArgs));
    try {
        job->slurm = SlurmRequest::fromJson(request, QStringLiteral("--slurm"));
    } catch (const JobError& e) {
        // The job file rules name keys; the user typed flags.
        QString message = e.message();
        message.replace(QStringLiteral("--slurm: "), QString());
        for (const FlagKey& entry : kFlags) {
            message.replace(QStringLiteral("\"launch.slurm.%1\"").arg(QLatin1String(entry.key)), QLatin1String(entry.flag));
            message.replace(QStringLiteral("launch.slurm.%1").arg(QLatin1String(entry.key)), QLatin1String(entry.flag));
        }
        message.replace(QRegularExpression(QStringLiteral("\"launch\\.slurm\\.extra_args\\[\\d+\\]\"")), QStringLiteral("--slurm-arg"));
        throw JobError(message);
    }
}

bool parseAttachArguments(const QStringList& arguments, QString* runDir, bool* quiet)
{
    QStringList rest = arguments.mid(1);
    const auto at = rest.indexOf(QStringLiteral("--attach"));
    if (at < 0) {
        for (const QString& argument : rest) {
            if (argument.startsWith(QStringLiteral("--attach="))) {
                rest.replace(rest.indexOf(argument), QStringLiteral("--attach"));
                rest.insert(rest.indexOf(QStringLiteral("--attach")) + 1, argument.mid(9));
                return parseAttachArguments(QStringList{arguments.value(0)} + rest, runDir, quiet);
            }
        }
        return false;
    }
    if (at + 1 >= rest.size() || rest.at(at + 1).startsWith(QStringLiteral("--"))) {
        throw JobError(QStringLiteral("--attach needs the run directory of a Slurm run, e.g. --attach runs/20261130-101500-cnn"));
    }
    *runDir = rest.at(at + 1);
    rest.remove(at, 2);
    *quiet = rest.removeAll(QStringLiteral("--quiet")) > 0;
    if (!rest.isEmpty()) {
        throw JobError(QStringLiteral("--attach follows a run with the settings it was submitted with: remove %1").arg(rest.first()));
    }
    return true;
}

} // namespace ringmaster::supervisor
