#pragma once
// The local backend of a run (run_backend.h; what it shares with Slurm's is in run_backend_base.h): pre-flight
// already made, a run directory, the metric socket, one ringmaster-trainer (or one interpreter running the user's own script: rank_command.h says what
// differs) per rank in one process group of its own (not the terminal's: Ctrl-C reaches the front end,
// which asks for a graceful stop), then watches it. One rank failing (or going silent past the heartbeat
// timeout) brings the whole group down and names the root cause (failure_verdict.h); --max-restarts
// relaunches from the latest checkpoint; a rendezvous port taken by another process between pre-flight
// and rank 0's bind is retried on a new port without counting as a restart. Stop is graceful (SIGTERM,
// grace period, SIGKILL); destruction kills every rank it still owns, so no trainer outlives its
// supervisor, and marks such a run stopped in summary.json. A run directory deleted under the run fails
// it at once (never restarted), and a rank killed mid-write has its temp files removed. Starting and
// following the group is in local_run.cpp; how it ends (failure, stop, kill, conclusion) in local_run_ending.cpp.

#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QSet>
#include <QTimer>

#include <algorithm>

#include <memory>
#include <vector>

#include "supervisor/failure_verdict.h"
#include "supervisor/rank_command.h"
#include "supervisor/run_backend_base.h"
#include "supervisor/system_sampler.h"
#include "supervisor/local/oom_watch.h"

namespace ringmaster::supervisor {

// How long restart N (1, 2, ...) waits before it relaunches: 1 s, 2 s, 4 s ... at most kMaxRestartBackoffMs.
inline constexpr int kMaxRestartBackoffMs = 60000;
inline int restartBackoffMs(int restart)
{
    return restart < 1 ? 0 : std::min(kMaxRestartBackoffMs, 1000 << std::min(restart - 1, 16));
}

class MetricServer;
class RankProcess;

class LocalRun : public RunBackendBase
{
    Q_OBJECT

public:
    // Relaunches on a new port after "address in use", before the run counts as failed.
    static constexpr int kMaxPortRetries = 3;
    // After the first failure, other ranks' exits within this window are weighed for the root cause:
    // a rank killed by a signal explains its peers' "connection reset" better than the other way round.
    static constexpr int kVerdictWindowMs = 300;
    // Lines of a failed rank's output quoted in the failure report.
    static constexpr int kTailLinesInReport = 8;

    explicit LocalRun(QObject* parent = nullptr);
    ~LocalRun() override;

    // Launch with a pre-flight already made for this job (runPreflight(job) returned `checked`).
    bool start(const JobSpec& job, const PreflightResult& checked, QString* error) override;
    // SIGTERM to every rank: they finish the step, checkpoint and exit; SIGKILL after the grace period.
    void requestStop() override;
    // SIGKILL to the whole group now.
    void kill() override;
    // Asks rank 0 to write a checkpoint after its current step (SIGUSR1).
    void requestCheckpoint() override;

    int masterPort() const override { return m_masterPort; }
    int restartCount() const override { return m_restarts; }
    int portRetryCount() const override { return m_portRetries; }
    QList<RankStatus> ranks() const override;
    // The process group of the current launch while this supervisor still owns it (a rank is alive), else 0.
    qint64 processGroup() const override;

private:
    struct Rank;

    void connectServer();
    void launchGroup();
    bool ownsGroup() const;
    bool acceptsPeer(int rank, qint64 pid) const;
    void onRankFinished(int rank, int exitCode, int exitSignal);
    void onHeartbeat(int rank, qint64 step, const QString& phase, const StepTiming& timing = {});
    void onWatchdog();
    void failDirectoryLost(const QString& reason);
    void onSystemSampled(const QList<SystemSample>& samples);
    // Samples the current launch's ranks (their pids), or stops sampling when none is running.
    void sampleRanks(bool running);
    void considerFailure(int rank, const QString& reason, FailurePriority priority, const RankEnd& end);
    void signalRanks(int signal);
    void bringDown(int signal, int escalateAfterMs);
    void dumpStacksThenKill();
    void concludeIfAllExited();
    // SIGKILL to every process still carrying this run's environment once its ranks are gone (local_run_ending.cpp).
    void killLeftovers();
    bool relaunchAfter(const QString& why, bool countsAsRestart);
    void finishRun(RunState state);
    // A script's reports (the helper module's frames, its TensorBoard files) show that it progresses.
    void scalarsArriving() override;

    LaunchPolicy m_policy;
    int m_masterPort = 0;
    std::unique_ptr<SystemSampler> m_systemSampler;     // what the ranks use, every 2 s, off this thread
    std::vector<std::unique_ptr<Rank>> m_ranks;
    pid_t m_group = 0;
    QSet<int> m_signalsSent;       // signals this supervisor sent to the current launch's ranks
    OomWatch m_oom;
    QTimer m_watchdog;
    QTimer m_verdictWindow;
    QTimer m_relaunch;        // a restart waiting out its back-off (or a port retry, at once)
    bool m_bringingDown = false;
    bool m_dirLost = false;        // the run directory was deleted under the run: failed, never restarted
    int m_restarts = 0;
    int m_portRetries = 0;
    int m_launchGeneration = 0;    // which launch the ranks' queued reports belong to
};

} // namespace ringmaster::supervisor
