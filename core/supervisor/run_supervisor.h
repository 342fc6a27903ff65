#pragma once
// Runs one job at a time, wherever it runs: the one class ringmaster-launch and the GUI use. It makes the
// pre-flight, picks the backend for the job (run_backend.h: LocalRun starts the ranks on this machine;
// SlurmRun submits the job to Slurm when the job has "launch.slurm") and forwards the backend's signals,
// so the front ends are the same for both. attach() follows a run that Slurm is still running after the
// launcher or the GUI that submitted it exited or left it running (leaveRunning()). A finished run's
// backend stays until the next start, so its state, ranks and root cause can still be read.

#include <QElapsedTimer>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPointer>

#include "supervisor/failure_verdict.h"
#include "supervisor/job_spec.h"
#include "supervisor/metric_line_parser.h"
#include "supervisor/preflight.h"
#include "supervisor/run_backend.h"
#include "supervisor/run_types.h"
#include "supervisor/scalar_recorder.h"
#include "supervisor/straggler_detector.h"

namespace ringmaster::supervisor {

class RunSupervisor : public QObject
{
    Q_OBJECT

public:
    explicit RunSupervisor(QObject* parent = nullptr);
    ~RunSupervisor() override;

    // Pre-flight and launch. On bad input returns false with *error set, and nothing is created.
    // Pre-flight may take a second or more (it runs ringmaster-trainer --validate-only): the GUI runs
    // runPreflight() on a worker thread and then calls the overload below.
    bool start(const JobSpec& job, QString* error);
    // Launch with a pre-flight already made for this job (runPreflight(job) returned `checked`).
    bool start(const JobSpec& job, const PreflightResult& checked, QString* error);
    // Follows again a run submitted to Slurm (RUN_DIR/job.json names its job id) that is still queued or
    // running. False with *error set when RUN_DIR is not such a run.
    bool attach(const QString& runDir, QString* error);
    // Graceful stop: each rank finishes its step, checkpoints and exits (SIGTERM; forced after the grace period).
    void requestStop();
    // Every rank ends now (SIGKILL to the group; scancel under Slurm).
    void kill();
    // Asks rank 0 to write a checkpoint after its current step (SIGUSR1).
    void requestCheckpoint();
    // Under Slurm: stops following the job without cancelling it (the app closed with "Leave it running
    // on the cluster", the launcher's terminal closed). The backend is let go (state() is Idle after) and
    // the job runs on; attach() follows it again. Returns the line saying so, with the exact
    // `ringmaster-launch --attach RUN_DIR`; empty when the run cannot be left (run_backend.h), and then
    // nothing changed.
    QString leaveRunning();

    RunState state() const;
    const JobSpec& job() const;
    QString runDir() const;
    QString socketPath() const;
    int masterPort() const;
    int restartCount() const;
    int portRetryCount() const;
    qint64 totalSteps() const;
    qint64 stepsPerEpoch() const;
    qint64 stepsReceived() const;
    qint64 rejectedConnections() const;
    QList<RankStatus> ranks() const;
    // The process group of the current launch while this supervisor still owns it (a rank is alive), else 0.
    qint64 processGroup() const;
    RootCause rootCause() const;
    // Under Slurm: the job id and Slurm's last word on the job while it waits or runs (run_backend.h);
    // empty for a run on this machine.
    QString jobId() const;
    QString queueState() const;
    // The rank computing longest per step lately and how it compares with the others' median (rank -1 until two
    // ranks have sent step timings; straggler_detector.h).
    StragglerVerdict slowestRank() const { return m_stragglers.slowest(); }
    // The backend of the current (or last) run, null before the first start.
    RunBackend* backend() const { return m_backend; }

Q_SIGNALS:
    // The backend's signals (run_backend.h says what each means).
    void scalarsReceived(const ringmaster::supervisor::ScalarBatch& scalars);
    void stateChanged(ringmaster::supervisor::RunState state);
    void stepReceived(const ringmaster::supervisor::StepMetric& metric);
    void evalReceived(const ringmaster::supervisor::EvalMetric& metric);
    void checkpointSaved(qint64 step, const QString& path);
    void trainingStarted(qint64 fromStep);
    void rankChanged(int rank);
    void logLine(int rank, const QString& line);
    // RunBackend::problem: one line the user must see now.
    void problem(const QString& line);
    void finished(ringmaster::supervisor::RunState state);
    // A rank computed StragglerDetector::kRatio times slower than the others' median for the job's
    // straggler_after (straggler_detector.h); `message` says so in one line ("rank 1 computes 1.6x slower ..."),
    // also written to the launcher log.
    void stragglerNamed(int rank, const QString& message);
    // RunBackend::systemSampled.
    void systemSampled(const QList<ringmaster::supervisor::SystemSample>& samples);

private:
    bool isActive() const;
    void adopt(RunBackend* backend);
    void onStepTiming(int rank, const StepTiming& timing);

    QPointer<RunBackend> m_backend;
    JobSpec m_noJob;
    StragglerDetector m_stragglers;
    QHash<int, QHash<QString, double>> m_systemNow; // each rank's latest system sample, by name
    QElapsedTimer m_clock; // the detector's time
};

} // namespace ringmaster::supervisor
