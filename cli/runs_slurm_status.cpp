#include "cli/runs_slurm_status.h"

#include "supervisor/slurm/slurm_client.h"
#include "runs/slurm_job.h"

namespace ringmaster::cli {

void applySlurmStates(QList<runs::RunRecord>* records)
{
    const supervisor::SlurmClient client;
    for (runs::RunRecord& record : *records) {
        const QString jobId = runs::unfinishedSlurmJob(record);
        if (jobId.isEmpty()) continue;
        const supervisor::SlurmJobStatus status = client.state(jobId);
        switch (status.state) {
        case supervisor::SlurmJobState::Pending:
            record.status = QStringLiteral("queued");
            break;
        case supervisor::SlurmJobState::Running:
        case supervisor::SlurmJobState::Completing:
            record.status = QStringLiteral("running");
            break;
        case supervisor::SlurmJobState::Unknown:
            record.problems << QStringLiteral("Slurm job %1 could not be asked about: %2").arg(jobId, status.error);
            break;
        default:
            break; // ended: the run's files say how
        }
    }
}

} // namespace ringmaster::cli
