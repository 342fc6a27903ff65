#pragma once
// The readable batch script (RUN_DIR/slurm/job.sbatch) that runs a job as ONE Slurm batch job: #SBATCH
// lines for the request (slurm_request.h), the run directory as working directory, and one `srun` step
// with one task per rank (per GPU on cuda), each task's output in RUN_DIR/logs/rank-<task>.log as the
// local launcher writes it. The built-in trainer reads the rank contract from Slurm's variables itself;
// a user's torchrun-style script gets torchrun's contract (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, GROUP_*, ROLE_*, TORCHELASTIC_*) from a one-line `sh -c` wrapper that each task runs
// before exec'ing the interpreter, with every user argument single-quoted. MASTER_ADDR is the job's
// first node, MASTER_PORT 15000 + job id % 17000 (the trainer's rule, core/trainer/dist_env.h). The
// user can read it, and submit it again by hand with `sbatch`.

#include <QString>

#include "supervisor/job_spec.h"
#include "supervisor/slurm/slurm_request.h"

namespace ringmaster::supervisor {

// Set in sbatch's environment by the submitting supervisor: its metric socket and token for the tasks.
inline constexpr char kSubmitterSocketEnv[] = "RINGMASTER_SUBMITTER_SOCKET";
inline constexpr char kSubmitterTokenEnv[] = "RINGMASTER_SUBMITTER_TOKEN";
inline constexpr char kSubmitterEndpointEnv[] = "RINGMASTER_SUBMITTER_ENDPOINT";
// The rendezvous port rule shared with ringmaster-trainer (core/trainer/dist_env.h).
inline constexpr long kSlurmMasterPortBase = 15000;
inline constexpr long kSlurmMasterPortSpan = 17000;

struct BatchScriptInput
{
    JobSpec job;               // what runs: the trainer or the user's script, device, nproc
    SlurmRequest request;      // the Slurm part (job.slurm once JobSpec holds it)
    QString runDir;            // absolute; the job's working directory, seen by every node
    QString jobFile;           // RUN_DIR/job.json, the trainer's --job
    QString trainerPath;       // the built-in trainer's absolute path
    QString interpreterPath;   // a script's interpreter, resolved
    QString scriptPath;        // a script, absolute
    QString helperDir;         // the Python helper module's folder for a script's PYTHONPATH (empty: none)
    QString resumeFrom;        // the trainer's --resume target (empty: a fresh start)
    int restartCount = 0;      // TORCHELASTIC_RESTART_COUNT
};

// Ranks on each node: ntasks_per_node, else one per GPU on cuda, else the job's nproc.
int slurmTasksPerNode(const JobSpec& job, const SlurmRequest& request);
// One line naming what in the job cannot run under Slurm and the fix, or empty when it can.
QString slurmJobProblem(const JobSpec& job, const SlurmRequest& request);

// One line naming a value the script would interpolate that holds a control character (a newline would end a
// comment line and start a command), or empty. Pre-flight refuses such jobs first (control_characters.h).
QString batchScriptProblem(const BatchScriptInput& input);
// The script's text; empty when batchScriptProblem() is not. The input must have passed slurmJobProblem().
QString batchScriptText(const BatchScriptInput& input);
// Writes RUN_DIR/slurm/job.sbatch (creating slurm/; atomically, executable) and returns its path, or
// returns empty with *error set (one line) and leaves no file behind.
QString writeBatchScript(const BatchScriptInput& input, QString* error);

// `text` as one sh word: single-quoted, each ' written as '\'' (nothing inside is expanded).
QString shellQuote(const QString& text);
// `text` as the value of an #SBATCH option: double-quoted, with \, " and # (sbatch's comment mark)
// escaped by a backslash.
QString sbatchQuote(const QString& text);

} // namespace ringmaster::supervisor
