#pragma once
// `ringmaster-runs list` says what Slurm says of the runs it may still be running: a run submitted to
// Slurm without a final status in its files (core/runs slurm_job.h) is listed "queued" while its job is
// pending and "running" while it runs, as the app's Runs tab lists it. Slurm is asked once per such run
// (core/supervisor SlurmClient: squeue, else scontrol), never about other runs; when it cannot be asked,
// the run keeps the status its files give and the reason is added to its problems.

#include <QList>

#include "runs/run_record.h"

namespace ringmaster::cli {

void applySlurmStates(QList<runs::RunRecord>* records);

} // namespace ringmaster::cli
