#pragma once
// ringmaster-launch: the command-line front end of RunSupervisor (torchrun's job, plus a run
// directory, live metrics, root-cause reports, restarts from checkpoints).
// Exit codes: 0 completed, 1 failed, 2 bad input (nothing launched), 3 stopped on request, 4 left running
// in Slurm (the terminal closed: SIGHUP during a --slurm or --attach run leaves the job to Slurm and
// prints the `ringmaster-launch --attach RUN_DIR` that follows it again; Ctrl-C and SIGTERM still stop it).

#include <QElapsedTimer>
#include <QMap>
#include <QObject>
#include <QStringList>

#include "supervisor/job_spec.h"
#include "supervisor/notify_command.h"
#include "supervisor/run_types.h"

class QSocketNotifier;

namespace ringmaster::supervisor {

class RunSupervisor;

inline constexpr int kLaunchExitCompleted = 0;
inline constexpr int kLaunchExitFailed = 1;
inline constexpr int kLaunchExitUsage = 2;
inline constexpr int kLaunchExitStopped = 3;
inline constexpr int kLaunchExitLeftRunning = 4;

// Builds the job from an optional job file and flags (flags win). Throws JobError.
// Returns false when --help was printed.
bool parseLaunchArguments(const QStringList& arguments, JobSpec* job, bool* quiet);
QString launchUsage();
// Removes --notify-command CMD (either spelling, before any "--") from *arguments and returns the checked
// program, empty when not given. Throws JobError when CMD names no executable program.
NotifyProgram takeNotifyCommand(QStringList* arguments);

class LaunchCommand : public QObject
{
    Q_OBJECT

public:
    LaunchCommand(JobSpec job, bool quiet, QObject* parent = nullptr);
    ~LaunchCommand() override;
    // Follows the Slurm run in RUN_DIR (ringmaster-launch --attach) instead of starting the job.
    void setAttach(const QString& runDir) { m_attachDir = runDir; }
    // Runs PROGRAM with each run event (run_event.h) as JSON on its stdin; the launcher waits for it at the end.
    void setNotifyCommand(const NotifyProgram& program);
    // Runs the event loop until the run ends; returns the exit code.
    int exec();

private:
    void onStep(const StepMetric& metric);
    void onEval(const EvalMetric& metric);
    void onFinished(RunState state);
    // Exits with m_exitCode once the notify command has had every event.
    void exitWhenNotified();
    void onSignal();
    void printLine(const QString& line);
    // "ringmaster-launch: warning: LINE" on stderr (a problem during the run, a notify command that failed).
    void printWarning(const QString& line);
    void printProgress(const StepMetric& metric);
    // A script's scalars: a live line "step N  name value ..." (a pipe: every couple of seconds).
    void onScalars(const ScalarBatch& scalars);
    QString lastScalarsText(int maxNames) const;
    // "  GPU util 97%" (one GPU) or "  GPU util 91-99%" (the least and most busy), from the latest system sample;
    // empty on CPU ranks.
    QString gpuUtilText() const;
    void showLive(const QString& text);

    JobSpec m_job;
    QString m_attachDir;
    bool m_quiet;
    bool m_tty;
    RunSupervisor* m_supervisor;
    NotifyCommand* m_notify = nullptr;
    bool m_ending = false; // the run is over; waiting for the notify command
    QSocketNotifier* m_signalNotifier = nullptr;
    int m_signalsSeen = 0;
    int m_exitCode = kLaunchExitFailed;
    QElapsedTimer m_lastPlainLine;
    bool m_progressShown = false;
    bool m_firstStepShown = false;
    EvalMetric m_lastEval;
    bool m_haveEval = false;
    StepMetric m_lastStep;
    QMap<QString, double> m_lastScalars; // a script's, by name
    QMap<int, double> m_gpuUtil;         // each GPU rank's utilisation at the latest system sample
    qint64 m_lastScalarStep = -1;
};

} // namespace ringmaster::supervisor
