#pragma once
// Talks to Slurm through its command-line tools (sbatch, squeue, scontrol, scancel, sinfo, and sacct
// where accounting exists), so Ringmaster needs no Slurm library and works with any version that has
// them. Each call runs one command with QProcess and waits for it, at most `timeoutMs`: the calls are
// BLOCKING and meant for a worker thread (QtConcurrent::run, or a QThread owning the client), never the
// GUI thread. A client is cheap and holds no state but its command paths, so each thread may own one.
// The program paths are configurable: tests point them at a folder of fake stubs.
// Every failure comes back as one line (Slurm's own message where it gave one), never an exception.

#include <QList>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace ringmaster::supervisor {

inline constexpr int kSlurmCommandTimeoutMs = 30000;

struct SlurmCommands
{
    QString sbatch = QStringLiteral("sbatch");
    QString squeue = QStringLiteral("squeue");
    QString scontrol = QStringLiteral("scontrol");
    QString scancel = QStringLiteral("scancel");
    QString sinfo = QStringLiteral("sinfo");
    QString sacct = QStringLiteral("sacct");   // empty: never asked (a cluster without accounting)
    QString srun = QStringLiteral("srun");     // only to run a command on one node of a running job
    int timeoutMs = kSlurmCommandTimeoutMs;

    // Every program as FOLDER/NAME (a folder of stubs, or a Slurm installed off PATH).
    static SlurmCommands inFolder(const QString& folder);
};

enum class SlurmJobState {
    Pending,      // waiting for resources; reason says why (Resources, Priority, JobHeldUser, ...)
    Running,
    Completing,   // the tasks ended, Slurm is cleaning up
    Completed,    // every step ended, the batch script exited 0
    Failed,       // the batch script exited non-zero (exitCode)
    Cancelled,    // scancel (or an administrator)
    Timeout,      // the time limit was reached
    NodeFail,
    OutOfMemory,
    Other,        // a state Ringmaster does not name (SUSPENDED, PREEMPTED, ...): see stateText
    Gone,         // Slurm no longer knows the job (finished long ago, or never existed)
    Unknown,      // Slurm could not be asked (see error)
};

struct SlurmJobStatus
{
    SlurmJobState state = SlurmJobState::Unknown;
    QString stateText;   // Slurm's word, e.g. "PENDING", "CANCELLED"
    QString reason;      // Slurm's reason ("Resources", "None"), empty when unknown
    int exitCode = -1;   // the batch script's exit code once known (ExitCode=CODE:SIGNAL), else -1
    int exitSignal = -1; // the signal that ended it, 0 for none, -1 when unknown
    QString error;       // set when state is Unknown

    // The job will not run again: completed, failed, cancelled, timed out, node failure, OOM, or gone.
    bool isFinal() const;
};

// One partition as sinfo describes it.
struct SlurmPartition
{
    QString name;
    bool isDefault = false;
    bool available = false;   // "up"
    QString timeLimit;        // as sinfo prints it: "infinite", "1-00:00:00", "30:00"
    int nodesIdle = 0;
    int nodesTotal = 0;
    QString gres;             // the nodes' generic resources, e.g. "gpu:a100:4"; empty when none
    int gpusPerNode = 0;      // the largest GPU count of the partition's nodes (from gres)
    // GPUs not in use on the partition's idle and mixed nodes (each node's Gres minus its GresUsed); -1 when
    // unknown (a sinfo without GresUsed). Nodes that are allocated, down or drained add none.
    int gpusFree = -1;
};

struct SlurmSubmission
{
    QString jobId;    // empty when the submission failed
    QString cluster;  // "12345;cluster" -> "cluster"; empty on a single cluster
    QString error;
};

struct SlurmPartitions
{
    QList<SlurmPartition> partitions;
    QString error;
};

class SlurmClient
{
public:
    explicit SlurmClient(SlurmCommands commands = {});

    // sbatch --parsable SCRIPT. The script's #SBATCH lines hold the request. `environment` (the caller's
    // own when empty) is what sbatch runs with, and so what the job's tasks inherit (sbatch exports it).
    SlurmSubmission submit(const QString& scriptPath, const QProcessEnvironment& environment = {}) const;
    // squeue -h -j ID -o '%T|%r' while the queue lists the job, else scontrol show job ID (JobState=,
    // Reason=, ExitCode=), else sacct (when configured and accounting exists), else Gone.
    SlurmJobStatus state(const QString& jobId) const;
    // Asks the tasks to stop: scancel --signal=TERM ID sends SIGTERM to every step's tasks (not to the
    // batch shell, which waits for srun and ends with the step's exit code), so each rank can save and
    // exit on its own. A job that has not started has no step to signal: Slurm refuses, use kill().
    // Returns empty, or the error line.
    QString stop(const QString& jobId) const;
    // Ends the job now: scancel ID (Slurm sends SIGTERM, then SIGKILL after its KillWait); CANCELLED.
    QString kill(const QString& jobId) const;
    // sinfo -h -o '%P|%a|%l|%F|%G', merged per partition; then the free GPUs from sinfo's per-node
    // listing (-N -O PartitionName,StateCompact,Gres,GresUsed), left unknown when that cannot be read.
    SlurmPartitions partitions() const;
    // The controller's hosts from scontrol show config ("SlurmctldHost[N] = NAME" or "NAME(ADDRESS)":
    // the address when given, else the name), primary first; empty when scontrol cannot answer.
    QStringList controllerHosts() const;
    // The program and arguments that run a command as one more step of running job ID on NODE, beside its tasks
    // (srun --jobid=ID --overlap --nodes=1 --ntasks=1 --nodelist=NODE --quiet): append the command's own
    // program and arguments. Empty when ID is not a job id or NODE not a plain node name. Never blocks.
    QStringList commandOnNode(const QString& jobId, const QString& node) const;

    // sinfo's and squeue's fields parsed, for tests of the parsing alone.
    static SlurmJobState stateFromText(const QString& text);
    static SlurmPartitions parsePartitions(const QString& sinfoOutput);
    // Adds the free GPUs of each partition in *listed from sinfo's per-node lines ("gpu|mix|gpu:a100:4|
    // gpu:a100:1(IDX:0)"); false, and nothing changed, when a line is not of that form.
    static bool parseGpuUse(const QString& sinfoNodesOutput, SlurmPartitions* listed);
    static SlurmJobStatus parseScontrolJob(const QString& scontrolOutput);
    static QStringList parseControllerHosts(const QString& scontrolConfig);

private:
    struct Result
    {
        int exitCode = -1;
        QString out;
        QString error;   // the program could not run, timed out, or exited non-zero: one line
    };
    Result run(const QString& program, const QStringList& arguments, const QProcessEnvironment& environment = {}) const;

    SlurmCommands m_commands;
};

} // namespace ringmaster::supervisor
