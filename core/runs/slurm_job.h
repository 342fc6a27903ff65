#pragma once
// Runs submitted to Slurm, as their run directories tell: the Slurm job a run was submitted as (job.json's
// "launch.slurm.job_id", which the supervisor writes once sbatch has answered; else RUN_DIR/slurm/job-id,
// written at the same moment), and whether Slurm may still be running it: submitted, and its summary.json
// holds no final status (completed, failed, stopped) yet. The app's Runs tab asks Slurm (off the GUI
// thread) only about such runs. Only files are read here; asking Slurm is core/supervisor's SlurmClient.

#include <QString>

#include "runs/run_files.h"   // kSlurmJobIdFile
#include "runs/run_record.h"

namespace ringmaster::runs {

// The Slurm job id RUN_DIR was submitted as ("57", "57_3" for an array task), or empty when it was not
// submitted to Slurm (or the id is not one).
QString slurmJobIdOf(const QString& runDir);
// completed, failed or stopped: a supervisor or the trainer concluded the run.
bool isFinalRunStatus(const QString& status);
// The Slurm job id of RECORD's run when Slurm may still run it (no final status yet), else empty.
QString unfinishedSlurmJob(const RunRecord& record);

} // namespace ringmaster::runs
