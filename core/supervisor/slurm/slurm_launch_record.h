#pragma once
// RUN_DIR/commands.json for a Slurm run, in the shape a local run writes it (rank_command.h's
// launchRecord), so that a run can be reproduced or reported the same way wherever it ran:
//   {"restart": N, "slurm_job_id": "57", "batch_script": "RUN_DIR/slurm/job.sbatch",
//    "ranks": [{"rank": 0, "node": 0, "program": "...", "arguments": [...], "environment": {...}}, ...]}
// One entry per task of the srun step, in Slurm's block order (tasks 0..T-1 on the first node, ...).
// "environment" holds the rank contract each task runs with and what Ringmaster gives it: a script task
// gets torchrun's variables from the batch script and its task wrapper (batch_script.h), the trainer
// derives the same RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR and MASTER_PORT from
// Slurm's variables (core/trainer/dist_env.h), recorded as the values it takes; both get the socket,
// endpoint and token the submitting supervisor offered. MASTER_ADDR is known only once Slurm places the
// job, so it reads "(the job's first node)"; the token reads "(secret)". Of the other variables, those the
// submitting environment already had with the same value (sbatch exports it to the job) are left out,
// as locally.

#include <QJsonObject>
#include <QProcessEnvironment>
#include <QString>

#include "supervisor/slurm/batch_script.h"

namespace ringmaster::supervisor {

inline constexpr char kFirstNodeText[] = "(the job's first node)";

// What the submitting supervisor put in sbatch's environment for the tasks (empty: not offered).
struct SubmitterOffer
{
    QString socketPath;
    QString endpoint;
    bool token = false;
};

QJsonObject slurmLaunchRecord(const BatchScriptInput& input, const QString& jobId, const SubmitterOffer& offer,
                              const QProcessEnvironment& base = QProcessEnvironment::systemEnvironment());

} // namespace ringmaster::supervisor
