#pragma once
// Ringmaster's window: GPUs and the job form on the left; the run's state, progress, chart, evaluation
// table, ranks and logs on the right, and the Runs tab (RunsPanel: past runs, opened and compared in its own chart). All supervision is RunSupervisor's (core/supervisor); this only shows it.
// Start runs the pre-flight (which waits for ringmaster-trainer --validate-only) on a worker thread,
// so the window stays live while it is "checking"; Stop cancels a start that is still checking. A Slurm job
// (the form's "Where") is started the same way; the state line adds Slurm's word on it while it waits or
// runs, and the Runs tab's Open on a run Slurm still runs follows it here (attachRun). Closing the window
// during a Slurm run offers, besides Stop and Cancel, "Leave it running on the cluster": the window stops
// following the job without cancelling it (RunSupervisor::leaveRunning) and closes; Open follows it again.
// How the window is put together (its areas and connections, the constructor's named parts) is in
// main_window_parts.cpp; what it does with a run in main_window.cpp.

#include <QFutureWatcher>

#include <atomic>
#include <memory>
#include <QMainWindow>
#include <QTimer>

#include "ui/form/job_form.h"
#include "supervisor/job_spec.h"
#include "supervisor/preflight.h"
#include "supervisor/run_types.h"

class QAction;
class QLabel;
class QProgressBar;
class QTabWidget;

namespace ringmaster::supervisor {
class RunSupervisor;
}

namespace ringmaster::ui {

class DesktopNotifier;
class EvalTable;
class GpuPanel;
class TrainerNote;
class LogPanel;
class LossChart;
class RankTable;
class RunsPanel;
class ScalarChart;
class SystemPanel;

class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // `source`: JobForm::JobSource::File for a job from a file (nothing it names runs before Start).
    void loadJob(const supervisor::JobSpec& job, JobForm::JobSource source = JobForm::JobSource::Own);
    // Loads the job file PATH into the form: the app's JOB argument, e.g. a *.ringmaster.json opened from
    // the file manager. A file that cannot be read or is not a valid job leaves the form as it was, puts
    // the reason in the banner and in ERROR, and gives false.
    bool openJobFile(const QString& path, QString* error = nullptr);
    supervisor::JobSpec currentJob() const;
    // Starts the form's pre-flight on a worker thread, then the run; false (with the reason in the
    // banner) when the form is invalid or a start is already being checked. A refused pre-flight
    // shows its reason in the banner later.
    bool startRun();
    // Pre-flight of a Start is running (the state label says "checking").
    bool isCheckingStart() const { return m_checkingStart; }
    // Starts once the form's own checks (the output folder) are back: for --start at launch.
    void startWhenFormChecked();
    // Forgets a start that is still checking: its result is dropped, nothing is launched.
    void cancelStart();
    void restoreLastJob();
    // The Runs tab's Resume: continues RUN_DIR with its own job.json from CHECKPOINT (a file in its
    // checkpoints/, or "" for the newest), as `ringmaster-launch --resume CHECKPOINT` does; the form is
    // left as it is. False (reason in the banner) when a run is active or the job cannot be read.
    bool resumeRun(const QString& runDir, const QString& checkpoint);
    // The Runs tab's New job from this run: the form takes RUN_DIR's job.json (as Load job… does).
    bool newJobFromRun(const QString& runDir);
    // The Runs tab's Open on a run Slurm still runs: follows it live (RunSupervisor::attach), as if started
    // here, Stop included. False (reason in the banner) when a run is active or RUN_DIR is no such run.
    bool attachRun(const QString& runDir);
    // Stops following the Slurm job without cancelling it (the close question's "Leave it running on the
    // cluster"): the supervisor lets it go, the log and banner say how to follow it again. False when the
    // run cannot be left (not a Slurm job with an id, a stop under way, over).
    bool leaveRunning();
    // "Choose trainer…": the job runs the trainer at PATH, which is remembered (a later job file may name it).
    void useTrainer(const QString& path);
    // Tests and --start close without asking (and so stop the run).
    void setConfirmOnClose(bool confirm) { m_confirmOnClose = confirm; }

    supervisor::RunSupervisor* supervisor() const { return m_supervisor; }
    GpuPanel* gpuPanel() const { return m_gpuPanel; }
    TrainerNote* trainerNote() const { return m_trainerNote; }
    JobForm* jobForm() const { return m_jobForm; }
    LossChart* chart() const { return m_chart; }
    EvalTable* evalTable() const { return m_evalTable; }
    ScalarChart* scalarChart() const { return m_scalarChart; }
    SystemPanel* systemPanel() const { return m_systemPanel; }
    RankTable* rankTable() const { return m_rankTable; }
    LogPanel* logPanel() const { return m_logPanel; }
    RunsPanel* runsPanel() const { return m_runsPanel; }
    QAction* startAction() const { return m_start; }
    QAction* stopAction() const { return m_stop; }
    QAction* killAction() const { return m_kill; }
    QAction* notifyAction() const { return m_notifyAction; }
    DesktopNotifier* notifier() const { return m_notifier; }
    QLabel* stateLabel() const { return m_stateLabel; }
    QLabel* banner() const { return m_banner; }
    QTabWidget* tabs() const { return m_tabs; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    // The constructor's named parts (main_window.cpp), in the order it calls them.
    void buildToolBar();
    QWidget* buildDevicesAndForm();
    QLayout* buildRunHeader();
    void buildTabs();
    void connectForm();
    void connectRunsPanel();
    void connectSupervisor();
    void onStateChanged(supervisor::RunState state);
    // The state label: the run's state and, under Slurm, Slurm's word on the job ("Slurm job 57: PENDING (Resources)").
    void showState();
    void clearRunView(const supervisor::JobSpec& job);
    void followRun(const supervisor::JobSpec& job);
    void onFinished(supervisor::RunState state);
    void updateProgress(const supervisor::StepMetric& latest);
    void updateActions();
    void onPreflightDone();
    bool startJob(const supervisor::JobSpec& job);
    void launch(const supervisor::JobSpec& job, const supervisor::PreflightResult& checked);
    void showBanner(const QString& html, bool error);
    void saveJobAs();
    void openJob();

    supervisor::RunSupervisor* m_supervisor;
    GpuPanel* m_gpuPanel;
    JobForm* m_jobForm;
    LossChart* m_chart;
    EvalTable* m_evalTable;
    ScalarChart* m_scalarChart;
    SystemPanel* m_systemPanel;
    RankTable* m_rankTable;
    LogPanel* m_logPanel;
    RunsPanel* m_runsPanel;
    QTabWidget* m_tabs;
    QLabel* m_stateLabel;
    QLabel* m_speedLabel;
    QLabel* m_banner;
    QLabel* m_devicesNote = nullptr;   // "not used under Slurm", over the GPU panel
    TrainerNote* m_trainerNote = nullptr; // which trainer runs, and whether it has CUDA
    QString m_shownQueueState;
    QProgressBar* m_progress;
    QAction* m_start = nullptr;
    QAction* m_stop = nullptr;
    QAction* m_kill = nullptr;
    QAction* m_checkpoint = nullptr;
    QAction* m_notifyAction = nullptr;
    DesktopNotifier* m_notifier;
    QTimer m_rankRefresh;
    QFutureWatcher<supervisor::PreflightResult> m_preflight;
    std::shared_ptr<std::atomic_bool> m_preflightCancel; // shared with the worker running runPreflight
    supervisor::JobSpec m_preflightJob;
    bool m_checkingStart = false;   // a Start's pre-flight is running and its result will be used
    bool m_startWhenFormChecked = false;
    bool m_confirmOnClose = true;
    bool m_closeWhenDone = false;
};

} // namespace ringmaster::ui
