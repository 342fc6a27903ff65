#pragma once
// The Runs tab's view of Slurm's queue: for the listed runs that Slurm may still run (core/runs
// slurm_job.h: submitted, no final status in summary.json yet), Slurm's state of each job, asked off the
// GUI thread (SlurmClient::state: squeue, else scontrol) one batch at a time, apart from the reading of
// the list, which never waits for Slurm. Answers are cached by job id: a final one for good, a live one
// for kFreshMs; while any watched job is queued or running it is asked again every kRepollMs. When a job
// Slurm ran ends, jobEnded() fires so the panel reads the run's files again. When Slurm cannot be asked
// (no squeue, a controller that does not answer), the rest of that batch is not asked either, and the
// runs keep the status their files give, with the reason in their tooltip.

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QHash>
#include <QList>
#include <QObject>
#include <QPair>
#include <QTimer>

#include "ui/runs/runs_model.h"
#include "supervisor/slurm/slurm_client.h"

namespace ringmaster::ui {

class SlurmQueueStates : public QObject
{
    Q_OBJECT

public:
    static constexpr int kFreshMs = 5000;
    static constexpr int kRepollMs = 10000;

    explicit SlurmQueueStates(QObject* parent = nullptr);

    // The Slurm tools to ask (default: those on PATH); tests point it at stubs.
    void setCommands(const supervisor::SlurmCommands& commands) { m_commands = commands; }
    // The runs to follow now, run directory (clean, absolute) -> Slurm job id; asks about the jobs that
    // have no fresh answer.
    void watch(const QHash<QString, QString>& jobsByRun);
    // By run directory, the watched runs Slurm has answered for: "queued" (pending), "running" (running
    // or completing), or Slurm's word for another live state, with "Slurm job 57: PENDING (Resources)"
    // (or why Slurm could not be asked) as the detail. A job that has ended has no status here.
    QHash<QString, RunQueueState> states() const;
    bool isAsking() const { return m_asking.isRunning(); }

Q_SIGNALS:
    // Answers arrived (states() holds them).
    void updated();
    // A job Slurm was running or holding has ended since.
    void jobEnded();

private:
    using Answers = QList<QPair<QString, supervisor::SlurmJobStatus>>;
    struct Answer
    {
        supervisor::SlurmJobStatus status;
        QElapsedTimer age;
    };
    void ask();
    void onAnswered();

    supervisor::SlurmCommands m_commands;
    QHash<QString, QString> m_jobs;      // run directory -> job id
    QHash<QString, Answer> m_answers;    // job id -> Slurm's last answer
    QFutureWatcher<Answers> m_asking;
    QTimer m_repoll;
    bool m_askAgain = false;
};

} // namespace ringmaster::ui
