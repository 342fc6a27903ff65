#pragma once
// The Slurm part of a job (the job file's "launch.slurm" object): how many nodes, tasks and GPUs per
// node to ask for, and where and how long (partition, time limit, account, extra sbatch options). When
// the object is present the job is meant to run as one Slurm batch job (see batch_script.h) instead of
// as ranks this machine starts itself. Loading checks every key and type and names the key it rejects,
// in job_spec.h's style (JobError); load -> save gives back the same request.
//   "slurm": {"nodes": 2, "ntasks_per_node": 4, "gpus_per_node": 4, "partition": "gpu",
//             "time": "0-02:00:00", "account": "proj42", "extra_args": ["--mem=64G", "--qos=high"],
//             "metrics": "auto"}
// "metrics" says how rank 0's live metrics reach the supervisor: "auto" (this host's socket, else a TCP
// endpoint the supervisor opens, else metrics.csv in the shared run directory), "tcp" (the endpoint
// only, never the socket), "files" (metrics.csv only: for a cluster whose nodes cannot reach this host).
// Once submitted, the run directory's job.json also holds "job_id": "12345" (ignored when submitting again).
// ntasks_per_node 0 (the default) means one task per GPU on cuda, else the job's nproc per node.

#include <QJsonObject>
#include <QJsonValue>
#include <QString>
#include <QStringList>

namespace ringmaster::supervisor {

inline constexpr int kMaxSlurmNodes = 4096;
inline constexpr int kMaxSlurmTasksPerNode = 1024;
inline constexpr int kMaxSlurmGpusPerNode = 64;

struct SlurmRequest
{
    bool enabled = false;      // "launch.slurm" was given: the job runs as a Slurm batch job
    int nodes = 1;
    int ntasksPerNode = 0;     // 0: one task per GPU (cuda), else the job's nproc
    int gpusPerNode = 0;       // 0: no GPUs requested
    QString partition;         // empty: the cluster's default partition
    QString time;              // sbatch --time as given (validated); empty: the partition's default
    QString account;           // empty: the user's default account
    QStringList extraArgs;     // further sbatch options, one long option per item ("--mem=64G")
    QString metrics = QStringLiteral("auto"); // "auto", "tcp" or "files" (see above)
    QString jobId;             // "job_id": the Slurm job this run was submitted as (written by Ringmaster)

    // {} for a request that is not enabled; the lead's JobSpec::toJson inserts it only when enabled.
    QJsonObject toJson() const;
    // `value` is "launch.slurm": undefined or null gives a disabled request; an object is checked and
    // gives an enabled one. Throws JobError naming the key ("launch.slurm.time") for anything else.
    static SlurmRequest fromJson(const QJsonValue& value, const QString& origin);
};

// The values "metrics" takes.
const QStringList& slurmMetricsPaths();

// sbatch's --time forms: "MIN", "MIN:SEC", "H:MIN:SEC", "D-H", "D-H:MIN", "D-H:MIN:SEC", or
// "INFINITE"/"UNLIMITED". Returns the limit in seconds (-1 for unlimited), or -2 when `text` is not one.
qint64 slurmTimeSeconds(const QString& text);
inline constexpr qint64 kSlurmTimeUnlimited = -1;
inline constexpr qint64 kSlurmTimeInvalid = -2;

// The options Ringmaster writes into the batch script itself; "extra_args" may not repeat them.
const QStringList& slurmOptionsSetByRingmaster();

} // namespace ringmaster::supervisor
