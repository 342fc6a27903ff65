#include "supervisor/slurm/slurm_preflight.h"

#include <QFileInfo>
#include <QStandardPaths>

#include "supervisor/slurm/batch_script.h"

namespace ringmaster::supervisor {
namespace {

QString located(const QString& program)
{
    if (program.contains(QLatin1Char('/'))) return QFileInfo(program).isExecutable() ? program : QString();
    return QStandardPaths::findExecutable(program);
}

QString partitionNames(const SlurmPartitions& listed)
{
    QStringList names;
    for (const SlurmPartition& p : listed.partitions) names << p.name + (p.isDefault ? QStringLiteral("*") : QString());
    return names.join(QStringLiteral(", "));
}

} // namespace

QString checkSlurmRequestFits(const SlurmRequest& request, const SlurmPartitions& listed)
{
    if (!listed.error.isEmpty()) return QStringLiteral("cannot list Slurm's partitions: %1").arg(listed.error);
    const SlurmPartition* chosen = nullptr;
    for (const SlurmPartition& p : listed.partitions) {
        if (request.partition.isEmpty() ? p.isDefault : p.name == request.partition) chosen = &p;
    }
    if (!chosen) {
        if (request.partition.isEmpty()) {
            return QStringLiteral("Slurm has no default partition: choose one with --partition (partitions: %1)").arg(partitionNames(listed));
        }
        return QStringLiteral("--partition %1: no such Slurm partition (partitions: %2)").arg(request.partition, partitionNames(listed));
    }
    if (!chosen->available) {
        return QStringLiteral("Slurm partition %1 is not up: choose another with --partition, or ask the administrators").arg(chosen->name);
    }
    if (request.nodes > chosen->nodesTotal) {
        return QStringLiteral("--nodes %1: Slurm partition %2 has %3 node(s): ask for fewer, or choose another partition")
            .arg(request.nodes).arg(chosen->name).arg(chosen->nodesTotal);
    }
    if (request.gpusPerNode > chosen->gpusPerNode) {
        return QStringLiteral("--gpus-per-node %1: the nodes of Slurm partition %2 have %3 GPU(s) at most%4")
            .arg(request.gpusPerNode).arg(chosen->name).arg(chosen->gpusPerNode)
            .arg(chosen->gres.isEmpty() ? QStringLiteral(" (no GPUs in their gres)") : QStringLiteral(" (gres %1)").arg(chosen->gres));
    }
    const qint64 limit = slurmTimeSeconds(chosen->timeLimit);
    const qint64 asked = request.time.isEmpty() ? kSlurmTimeInvalid : slurmTimeSeconds(request.time);
    if (limit >= 0 && (asked == kSlurmTimeUnlimited || asked > limit)) {
        return QStringLiteral("--time %1: longer than the time limit of Slurm partition %2 (%3): ask for less")
            .arg(request.time, chosen->name, chosen->timeLimit);
    }
    return {};
}

QString checkSlurmJob(const JobSpec& job, const SlurmCommands& commands)
{
    if (const QString problem = slurmJobProblem(job, job.slurm); !problem.isEmpty()) return problem;
    for (const QString& tool : {commands.sbatch, commands.squeue, commands.scontrol, commands.scancel, commands.sinfo}) {
        if (located(tool).isEmpty()) {
            return QStringLiteral("%1 not found: --slurm needs Slurm's client tools on PATH (Debian: apt install slurm-client), "
                                  "or run Ringmaster on the cluster's login node").arg(tool);
        }
    }
    return checkSlurmRequestFits(job.slurm, SlurmClient(commands).partitions());
}

} // namespace ringmaster::supervisor
