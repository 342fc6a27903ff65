#pragma once
// The Slurm backend of a run (run_backend.h): the job runs as ONE Slurm batch job instead of as ranks
// this machine starts. start() prepares the run directory as a local run does, writes the readable
// batch script (batch_script.h), submits it with sbatch --parsable (off this thread: slurm_client.h
// blocks) and records the job id in job.json ("launch.slurm.job_id") and RUN_DIR/slurm/job-id. Then it
// follows the job, polling only:
//   - the queue state (squeue, else scontrol show job): pending with Slurm's reason, running, done;
//   - live metrics from rank 0 over this host's metric socket when rank 0 runs here, else over a TCP
//     endpoint the supervisor opens for the run on the address the compute nodes reach
//     (reachable_address.h; the socket path, endpoint and token reach the tasks through sbatch's
//     exported environment, never through the readable script); when nothing arrives over either,
//     rank 0's metrics.csv and eval.csv in the shared run directory instead. "launch.slurm.metrics"
//     narrows this to TCP or to the files. The log says which path is in use. Every path passes one
//     step gate, so a step is shown once whichever arrives first;
//   - each task's log (RUN_DIR/logs/rank-N.log, written by srun), shown live and kept for the failure
//     report; a script's rank-0 lines are read for scalars as a local run's output is;
//   - the batch script's own output (RUN_DIR/slurm/batch-<id>.log), where srun names a task that failed
//     (task_failures.h), which becomes the root cause as a local rank's exit does;
//   - every trainer rank's heartbeats over the socket or TCP: what its process uses (RUN_DIR/system.csv and
//     tb/system, system_files.h), and its silence: a hung rank is the root cause, every rank's stacks are taken on
//     its node (gdb as one more step of the job, stack_dumps.h), then the job is cancelled.
// Stop sends SIGTERM to the job's tasks (scancel --signal=TERM: each rank checkpoints and exits), and
// cancels the job after the grace period; Kill cancels it now; a job still pending is simply cancelled.
// The run concludes only when Slurm says the job is over, so nothing is left in the queue. Destroying
// a SlurmRun (the launcher or the GUI exits), or leaveRunning() (the app closed with "Leave it running",
// the launcher's terminal closed), leaves the job running: attach() follows it again from its run
// directory, from the files alone (the endpoint died with its supervisor). RUN_DIR/commands.json records,
// once the job has an id, what each task runs and the environment Ringmaster gives it
// (slurm_launch_record.h).

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QTimer>

#include <memory>
#include <vector>

#include "supervisor/run_backend_base.h"
#include "supervisor/slurm/file_tail.h"
#include "supervisor/slurm/batch_script.h"
#include "supervisor/slurm/metrics_csv_follower.h"
#include "supervisor/slurm/reachable_address.h"
#include "supervisor/slurm/slurm_launch_record.h"
#include "supervisor/slurm/slurm_client.h"

namespace ringmaster::supervisor {

class SlurmRun : public RunBackendBase
{
    Q_OBJECT

public:
    static constexpr int kPollIntervalMs = 1000;     // squeue / scontrol
    static constexpr int kFollowIntervalMs = 250;    // logs and CSV files
    // Rank 0 sends a heartbeat every second over the socket or TCP: this long without one while the job
    // runs means it cannot reach this host (or its connection died), and metrics.csv is followed too.
    static constexpr int kSocketSilenceMs = 10000;

    explicit SlurmRun(QObject* parent = nullptr);
    ~SlurmRun() override;

    // The Slurm tools to use (default: those on PATH).
    void setCommands(const SlurmCommands& commands) { m_client = SlurmClient(commands); }

    bool start(const JobSpec& job, const PreflightResult& checked, QString* error) override;
    // Follows again the Slurm job of RUN_DIR (its job.json "launch.slurm.job_id", else RUN_DIR/slurm/job-id).
    bool attach(const QString& runDir, QString* error);
    void requestStop() override;
    void kill() override;
    void requestCheckpoint() override;
    // Stops polling and following, closes the socket and endpoint, and does not cancel the job; the run's
    // log gets the returned line ("left running in Slurm job 57: follow it again with ringmaster-launch
    // --attach RUN_DIR"). Empty, and nothing changes, before the job has an id, once a stop or kill was
    // asked for, or once the run is over.
    QString leaveRunning() override;

    int masterPort() const override { return 0; }
    int restartCount() const override { return 0; }
    int portRetryCount() const override { return 0; }
    QList<RankStatus> ranks() const override { return m_ranks; }
    qint64 processGroup() const override { return 0; }

    QString jobId() const override { return m_jobId; }
    // Slurm's last word on the job ("PENDING (Resources)", "RUNNING"), empty before the first answer.
    QString queueState() const override { return m_queueText; }

private:
    void begin();
    void onAddressResolved();
    void submit();
    SubmitterOffer submitterOffer() const;
    void onSubmitted();
    void poll();
    void onPolled();
    // The job's step runs (Slurm said RUNNING, or rank 0 reported over the socket or TCP before it did).
    void sawTasksRunning();
    void tasksReportOverTheSocket();
    void follow();
    void followCsv();
    // A rank whose heartbeats reached this host and then stayed away for --heartbeat-timeout is hung: it becomes the
    // root cause, every rank's stacks are taken on its node (gdb through srun, StackDumps), then the job is cancelled
    // (slurm_run_ending.cpp). Ranks that never reached this host are not judged.
    void watchForHang();
    void dumpStacksThenCancel();
    // What runs a command on RANK's node beside its process (SlurmClient::commandOnNode); empty when its hello
    // named no plain node or pid.
    QStringList commandOnNodeOf(int rank) const;
    void conclude(const SlurmJobStatus& status);
    void judgeFailure(const SlurmJobStatus& status);
    void onStep(const StepMetric& metric, bool overSocket);
    void onEval(const EvalMetric& metric, bool overSocket);
    // Steps already shown from before the point training resumes from arrive again.
    void trainingResumesFrom(qint64 step) override;
    // A run that ends before its job reaches Slurm (stopped, or refused): OUTCOME_STATE, with ENDED_LINE.
    void endUnsubmitted(RunState state, const QString& endedLine);
    void runAsync(const QString& what, std::function<QString(const SlurmClient&)> call);
    void setRankStates(RankState state);

    SlurmClient m_client;
    QString m_jobId;
    QString m_queueText;
    bool m_attached = false;
    QFutureWatcher<ReachableAddress> m_resolving;
    QFutureWatcher<SlurmSubmission> m_submitting;
    QString m_batchScript;
    BatchScriptInput m_batchInput;          // what the batch script was written from, for commands.json
    QFutureWatcher<SlurmJobStatus> m_polling;
    QTimer m_pollTimer;
    QTimer m_followTimer;
    QList<RankStatus> m_ranks;
    std::vector<FileTail> m_rankLogs;
    std::vector<QStringList> m_lastLines;   // per rank, the last kKeptLines lines
    FileTail m_batchLog;
    QStringList m_batchLines;               // the batch script's output so far (bounded)
    MetricsCsvFollower m_csv;
    bool m_followCsv = false;
    QString m_liveTransport;                // how rank 0 connected ("this host's socket", "TCP from ..."), or empty
    QElapsedTimer m_sinceSocketFrame;       // since the last frame over the socket or TCP (or since running)
    std::vector<QElapsedTimer> m_sinceBeat; // per rank, since its last heartbeat (invalid before its first)
    RootCause m_hung;                       // the rank declared hung (rank -1: none)
    struct RankWhereabouts
    {
        qint64 pid = 0;  // on its node
        QString node;    // empty: unknown (its hello named none)
    };
    std::vector<RankWhereabouts> m_whereabouts; // per rank, from its hello (MetricServer::rankLocated)
    qint64 m_lastStep = -1;                 // the step gate (socket and CSV)
    qint64 m_lastEvalStep = -1;
    qint64 m_rank0Pid = 0;
    bool m_cancelSent = false;
    bool m_sawRunning = false;
    bool m_left = false;   // leaveRunning() let the job go
};

// `ringmaster-launch --attach RUN_DIR`, the directory quoted for a shell when it needs to be.
QString attachCommandLine(const QString& runDir);

} // namespace ringmaster::supervisor
