#pragma once
// The seam between a run and where its ranks run. RunSupervisor (run_supervisor.h), which the launcher
// and the GUI use, owns one backend per run and forwards its signals: LocalRun (local/local_run.h) starts the
// ranks on this machine in one process group; SlurmRun (slurm/slurm_run.h) submits them to Slurm as one
// batch job and follows it. A backend reports through the same signals either way, so the front ends
// never ask which one is behind a run. Both derive from RunBackendBase (run_backend_base.h), which holds
// what they share and does it once. Calls a backend cannot honour (a process group under Slurm) answer
// with a neutral value (0, empty).

#include <QList>
#include <QObject>
#include <QString>

#include "supervisor/job_spec.h"
#include "supervisor/preflight.h"
#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

class RunBackend : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;
    ~RunBackend() override = default;

    // Launch a job that passed pre-flight. On bad input returns false with *error set.
    virtual bool start(const JobSpec& job, const PreflightResult& checked, QString* error) = 0;
    // Graceful: every rank finishes its step, checkpoints and exits; forced after the grace period.
    virtual void requestStop() = 0;
    // Every rank ends now.
    virtual void kill() = 0;
    // Rank 0 writes a checkpoint after its current step.
    virtual void requestCheckpoint() = 0;

    virtual RunState state() const = 0;
    virtual const JobSpec& job() const = 0;
    virtual QString runDir() const = 0;
    virtual QString socketPath() const = 0;
    virtual int masterPort() const = 0;
    virtual int restartCount() const = 0;
    virtual int portRetryCount() const = 0;
    virtual qint64 totalSteps() const = 0;
    virtual qint64 stepsPerEpoch() const = 0;
    virtual qint64 stepsReceived() const = 0;
    virtual qint64 rejectedConnections() const = 0;
    virtual QList<RankStatus> ranks() const = 0;
    // The process group of the current launch while this backend owns it, else 0.
    virtual qint64 processGroup() const = 0;
    virtual RootCause rootCause() const = 0;
    // Where a batch scheduler runs the job (Slurm): its job id, and its last word on the job
    // ("PENDING (Resources)", "RUNNING"). Empty for ranks on this machine, and before the first answer.
    virtual QString jobId() const { return {}; }
    virtual QString queueState() const { return {}; }
    // Stops following a run whose ranks do not depend on this process (a Slurm job) without ending it,
    // so that the front end can exit and the run goes on; returns one line saying where it runs and how
    // to follow it again. Empty when the run cannot be left running (ranks on this machine die with their
    // supervisor; a job not submitted yet or already being stopped): nothing changed then.
    virtual QString leaveRunning() { return {}; }
    // A straggler named by the supervisor (straggler_detector.h): "straggler: MESSAGE" goes into the run's
    // launcher log and out as logLine(-1), and {rank, message, time} into summary.json's "stragglers" at the end.
    virtual void recordStraggler(int rank, const QString& message) = 0;

Q_SIGNALS:
    // Every scalar recorded in RUN_DIR/scalars.csv: the trainer's metrics, a script's printed values,
    // frames from the Python helper module.
    void scalarsReceived(const ringmaster::supervisor::ScalarBatch& scalars);
    void stateChanged(ringmaster::supervisor::RunState state);
    void stepReceived(const ringmaster::supervisor::StepMetric& metric);
    void evalReceived(const ringmaster::supervisor::EvalMetric& metric);
    void checkpointSaved(qint64 step, const QString& path);
    // Rank 0 began training at this step (0 on a fresh start; a restart resumes from its checkpoint,
    // so metrics already shown past this step will arrive again and should be dropped).
    void trainingStarted(qint64 fromStep);
    void rankChanged(int rank);
    // One tick of what every rank uses (system_sampler.h), already appended to RUN_DIR/system.csv.
    void systemSampled(const QList<ringmaster::supervisor::SystemSample>& samples);
    // A rank's heartbeat carried its step timing (the means of its steps since its previous heartbeat).
    void stepTimingReceived(int rank, const ringmaster::supervisor::StepTiming& timing);
    // rank -1: the launcher's own log.
    void logLine(int rank, const QString& line);
    // Something the user must see now, in one line, while the run goes on (the first write into the run
    // directory that failed, e.g. a full disk). Also in the launcher's log.
    void problem(const QString& line);
    void finished(ringmaster::supervisor::RunState state);
};

} // namespace ringmaster::supervisor
