#pragma once
// What every run backend holds and does the same way, written once: the job and its pre-flight, the run
// directory, the metric socket, the scalar record (RUN_DIR/scalars.csv) with the last values for summary.json,
// a script's output parser and TensorBoard follower, the stragglers named, the root cause, the state and its
// log line, the trainer's status frames, and the common half of concluding a run (summary.json's final fields,
// the ending logged, `finished` emitted once). RunBackend (run_backend.h) stays the interface the front ends
// see; LocalRun (local/local_run.h) and SlurmRun (slurm/slurm_run.h) derive from this and implement only how
// ranks are launched, stopped, killed and followed where they run. Like spdlog's base_sink: the accessors
// below are final, the backends add hooks, never a second copy.

#include <QJsonArray>
#include <QMap>
#include <QTimer>

#include <memory>

#include "supervisor/failure_verdict.h"
#include "supervisor/job_spec.h"
#include "supervisor/metric_line_parser.h"
#include "supervisor/preflight.h"
#include "supervisor/run_backend.h"
#include "supervisor/run_directory.h"
#include "supervisor/run_types.h"
#include "supervisor/scalar_recorder.h"

class QJsonObject;

namespace ringmaster::supervisor {

class MetricServer;
class StackDumps;
class SystemFiles;
class TensorBoardFollower;

class RunBackendBase : public RunBackend
{
    Q_OBJECT

public:
    explicit RunBackendBase(QObject* parent = nullptr);
    ~RunBackendBase() override;

    RunState state() const final { return m_state; }
    const JobSpec& job() const final { return m_job; }
    QString runDir() const final { return m_dir.path(); }
    QString socketPath() const final;
    qint64 rejectedConnections() const final;
    qint64 totalSteps() const final { return m_totalSteps; }
    qint64 stepsPerEpoch() const final { return m_stepsPerEpoch; }
    qint64 stepsReceived() const final { return m_stepsReceived; }
    RootCause rootCause() const final { return m_verdict.rootCause(); }
    void recordStraggler(int rank, const QString& message) final;

protected:
    // The job as it will run and be recorded in job.json: for a script, the script and interpreter that
    // pre-flight resolved, and its TensorBoard folder made absolute (the ranks may start elsewhere).
    void adoptJob(const JobSpec& job, const PreflightResult& checked);
    // Every write into the run directory that fails first is logged and said to the user once (RunBackend::problem).
    void watchWrites();
    // RUN_DIR/scalars.csv opened for appending, and a script's output parser set from its patterns (the trainer
    // reports over the socket: its log lines would otherwise record every value twice).
    void openScalarRecord();
    // One batch of scalars: kept as the last values for summary.json, appended to scalars.csv (a failed write is
    // said once), then emitted. wallTime < 0: stamped on arrival (TensorBoard events carry their own).
    void recordScalars(const ScalarBatch& scalars, double wallTime = -1.0);
    // A script's TensorBoard event files followed live into the scalar record (nothing for the trainer, which
    // reports over the socket): its own folder (only files new since the start when the user named it), else the
    // run directory, never the launcher's own tb/system.
    void followTensorBoard();
    // The trainer's status frame: "running" carries the totals, rank 0's message and the step it resumed from
    // (trainingResumesFrom, then trainingStarted, and Starting becomes Running); anything else is its final word.
    void onStatus(const QString& status, const QJsonObject& frame);
    void setState(RunState state);
    // Into the launcher's log (RUN_DIR/logs/launcher.log) and out as logLine(-1).
    void log(const QString& message);

    // The common half of ending a run, once. OUTCOME comes with what the backend knows (state, world size,
    // restarts, who owns summary.json); the scalars, stragglers, step count and root cause are added here. A
    // script's last TensorBoard events are read, the ranks' leftovers removed, summary.json patched (and the
    // run lock released once the final status is on disk), then "FAILED: <root cause>" with its lines, or
    // ENDED_LINE, and MORE_LINES are logged, and the state is set and `finished` emitted.
    void concludeRun(RunDirectory::Outcome outcome, const QString& endedLine, const QStringList& moreLines = {});

    // Hooks. A batch of scalars is about to be recorded (a script's reports show that it progresses).
    virtual void scalarsArriving() {}
    // A "running" status frame: training (re)starts at this step, before trainingStarted is emitted.
    virtual void trainingResumesFrom(qint64 step) { Q_UNUSED(step); }

    JobSpec m_job;
    PreflightResult m_checked;
    RunDirectory m_dir;
    RunState m_state = RunState::Idle;
    FailureVerdict m_verdict;
    std::unique_ptr<MetricServer> m_server;
    ScalarRecorder m_scalarRecorder;
    MetricLineParser m_lineParser{QStringList{QString::fromLatin1(kMetricPatternNone)}}; // on for scripts' rank 0
    std::unique_ptr<TensorBoardFollower> m_tensorboard; // a script's event files, followed live
    std::unique_ptr<StackDumps> m_stacks;               // a hung run's stacks, taken before it is ended
    std::unique_ptr<SystemFiles> m_systemFiles;         // RUN_DIR/system.csv and tb/system
    QJsonArray m_stragglers;                            // named during this run, for summary.json
    qint64 m_lastScalarStep = -1;
    QMap<QString, double> m_lastScalars;
    qint64 m_totalSteps = 0;
    qint64 m_stepsPerEpoch = 0;
    qint64 m_stepsReceived = 0;
    QString m_finalStatus;    // the trainer's last status frame other than "running"
    QTimer m_escalation;      // a stop's grace period
    bool m_stopRequested = false;
};

} // namespace ringmaster::supervisor
