#pragma once
// The pre-flight of a job that runs under Slurm (preflight.h calls it instead of this machine's GPU and
// port checks): the job can run under Slurm at all (batch_script.h's slurmJobProblem), Slurm's tools are
// installed, the partition exists and is up, and the request fits it (nodes, GPUs per node, time limit),
// each failure one line naming the problem and the fix. It asks sinfo, so it blocks for as long as
// Slurm takes to answer: call it where pre-flight runs (a worker thread in the GUI).

#include <QString>

#include "supervisor/job_spec.h"
#include "supervisor/slurm/slurm_client.h"

namespace ringmaster::supervisor {

// Empty when the job may be submitted.
QString checkSlurmJob(const JobSpec& job, const SlurmCommands& commands = {});
// The same checks against partitions already listed (tests, and the GUI's form).
QString checkSlurmRequestFits(const SlurmRequest& request, const SlurmPartitions& listed);

} // namespace ringmaster::supervisor
