#pragma once
// Ringmaster's window: GPUs and the job form on the left; the run's state, progress, chart, ranks
// and logs on the right. All supervision is RunSupervisor's (core/supervisor); this only shows it.

#include <QMainWindow>
#include <QTimer>

#include "job_spec.h"
#include "run_types.h"

class QAction;
class QLabel;
class QProgressBar;
class QTabWidget;

namespace ringmaster::supervisor {
class RunSupervisor;
}

namespace ringmaster::ui {

class GpuPanel;
class JobForm;
class LogPanel;
class LossChart;
class RankTable;

class MainWindow : public QMainWindow
{
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    void loadJob(const supervisor::JobSpec& job);
    supervisor::JobSpec currentJob() const;
    // Starts the form's job; false (with the reason in the banner) when pre-flight refuses it.
    bool startRun();
    void restoreLastJob();
    // Tests and --start close without asking.
    void setConfirmOnClose(bool confirm) { m_confirmOnClose = confirm; }

    supervisor::RunSupervisor* supervisor() const { return m_supervisor; }
    GpuPanel* gpuPanel() const { return m_gpuPanel; }
    JobForm* jobForm() const { return m_jobForm; }
    LossChart* chart() const { return m_chart; }
    RankTable* rankTable() const { return m_rankTable; }
    LogPanel* logPanel() const { return m_logPanel; }
    QAction* startAction() const { return m_start; }
    QAction* stopAction() const { return m_stop; }
    QAction* killAction() const { return m_kill; }
    QLabel* stateLabel() const { return m_stateLabel; }
    QLabel* banner() const { return m_banner; }
    QTabWidget* tabs() const { return m_tabs; }

protected:
    void closeEvent(QCloseEvent* event) override;

private:
    void buildToolBar();
    void onStateChanged(supervisor::RunState state);
    void onFinished(supervisor::RunState state);
    void updateProgress(const supervisor::StepMetric& latest);
    void updateActions();
    void showBanner(const QString& html, bool error);
    void saveJobAs();
    void openJob();

    supervisor::RunSupervisor* m_supervisor;
    GpuPanel* m_gpuPanel;
    JobForm* m_jobForm;
    LossChart* m_chart;
    RankTable* m_rankTable;
    LogPanel* m_logPanel;
    QTabWidget* m_tabs;
    QLabel* m_stateLabel;
    QLabel* m_speedLabel;
    QLabel* m_banner;
    QProgressBar* m_progress;
    QAction* m_start = nullptr;
    QAction* m_stop = nullptr;
    QAction* m_kill = nullptr;
    QAction* m_checkpoint = nullptr;
    QTimer m_rankRefresh;
    bool m_confirmOnClose = true;
    bool m_closeWhenDone = false;
};

} // namespace ringmaster::ui
