// How the main window is put together (main_window.h): the constructor's named parts, each one area of the window
// or one set of connections, in the order MainWindow's constructor calls them. What the window does with a run
// is in main_window.cpp.
#include "ui/main_window.h"

#include <QAction>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>

#include "supervisor/app_settings.h"
#include "ui/desktop_notifier.h"
#include "ui/charts/loss_chart.h"
#include "ui/charts/scalar_chart.h"
#include "ui/charts/system_panel.h"
#include "ui/form/job_form.h"
#include "ui/form/program_choice.h"
#include "ui/form/trainer_note.h"
#include "ui/panes/eval_table.h"
#include "ui/panes/gpu_panel.h"
#include "ui/panes/log_panel.h"
#include "ui/panes/rank_table.h"
#include "supervisor/run_supervisor.h"
#include "ui/runs/run_actions.h"
#include "ui/runs/runs_panel.h"

namespace ringmaster::ui {
namespace {

constexpr int kRankRefreshMs = 500;

} // namespace

void MainWindow::buildToolBar()
{
    auto* bar = addToolBar(tr("Run"));
    bar->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->setMovable(false);
    m_start = bar->addAction(style()->standardIcon(QStyle::SP_MediaPlay), tr("Start"), this, [this] { startRun(); });
    m_start->setToolTip(tr("Start one trainer per selected GPU (or CPU rank)"));
    m_stop = bar->addAction(style()->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this, [this] {
        if (isCheckingStart()) cancelStart();
        else m_supervisor->requestStop();
    });
    m_stop->setToolTip(tr("Graceful stop: every rank finishes its step, rank 0 writes a final checkpoint"));
    m_kill = bar->addAction(style()->standardIcon(QStyle::SP_BrowserStop), tr("Kill"), this, [this] { m_supervisor->kill(); });
    m_kill->setToolTip(tr("SIGKILL every rank now (no final checkpoint)"));
    m_checkpoint = bar->addAction(style()->standardIcon(QStyle::SP_DialogSaveButton), tr("Checkpoint now"), this,
                                  [this] { m_supervisor->requestCheckpoint(); });
    m_checkpoint->setToolTip(tr("Rank 0 writes a checkpoint after its current step"));
    bar->addSeparator();
    bar->addAction(style()->standardIcon(QStyle::SP_DialogOpenButton), tr("Load job…"), this, &MainWindow::openJob)
        ->setToolTip(tr("Load a job file (the same JSON ringmaster-launch reads)"));
    bar->addAction(style()->standardIcon(QStyle::SP_DriveFDIcon), tr("Save job…"), this, &MainWindow::saveJobAs)
        ->setToolTip(tr("Save this form as a job file for ringmaster-launch"));
    bar->addSeparator();
    m_notifyAction = bar->addAction(style()->standardIcon(QStyle::SP_MessageBoxInformation), tr("Notify"));
    m_notifyAction->setCheckable(true);
    m_notifyAction->setChecked(m_notifier->isEnabled());
    m_notifyAction->setToolTip(tr("Show a desktop notification when a run completes, fails or hangs"));
    connect(m_notifyAction, &QAction::toggled, this, [this](bool on) {
        m_notifier->setEnabled(on);
        QSettings().setValue(QLatin1String(supervisor::kDesktopNotificationsKey), on);
    });
}

// The left side: the trainer and devices to run on, then the job form, scrolling rather than clipping.
QWidget* MainWindow::buildDevicesAndForm()
{
    auto* left = new QWidget(this);
    auto* leftLayout = new QVBoxLayout(left);
    auto* gpuTitle = new QLabel(tr("<b>Devices</b>"), left);
    leftLayout->addWidget(gpuTitle);
    m_devicesNote = new QLabel(tr("Not used under Slurm: the job runs on the nodes and GPUs Slurm allocates "
                                  "(the Slurm cluster fields below)."), left);
    m_devicesNote->setWordWrap(true);
    m_devicesNote->setStyleSheet(QStringLiteral("color: #455a64;"));
    m_devicesNote->setVisible(false);
    leftLayout->addWidget(m_devicesNote);
    m_trainerNote = new TrainerNote(left);
    m_trainerNote->setGpusPresent(m_gpuPanel->hasGpus());
    connect(m_trainerNote, &TrainerNote::changed, this, [this] { updateActions(); });
    leftLayout->addWidget(m_trainerNote);
    auto* chooseTrainer = new QPushButton(tr("Choose trainer…"), left);
    chooseTrainer->setObjectName(QStringLiteral("chooseTrainer"));
    chooseTrainer->setToolTip(tr("Run another ringmaster-trainer (e.g. one built against your CUDA PyTorch); it is remembered, "
                                 "so a job file may name it later"));
    connect(chooseTrainer, &QPushButton::clicked, this, [this] {
        if (const QString path = askForTrainer(this); !path.isEmpty()) useTrainer(path);
    });
    leftLayout->addWidget(chooseTrainer, 0, Qt::AlignLeft);
    leftLayout->addWidget(m_gpuPanel);
    leftLayout->addWidget(m_jobForm, 1);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(left);
    scroll->setWidgetResizable(true);
    // The form wraps to the panel's width; should it ever need more, scroll rather than clip.
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
    scroll->setMinimumWidth(400);
    return scroll;
}

// Above the tabs: the run's state, its progress and speed.
QLayout* MainWindow::buildRunHeader()
{
    m_stateLabel->setTextFormat(Qt::RichText);
    m_stateLabel->setToolTip(tr("The run's state, as the supervisor sees its processes"));
    m_progress->setFormat(tr("step %v / %m"));
    m_progress->setMinimumWidth(260);
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::RichText);
    m_banner->setVisible(false);
    connect(m_banner, &QLabel::linkActivated, this, [this](const QString& link) {
        if (link.startsWith(QStringLiteral("rank:"))) {
            m_tabs->setCurrentWidget(m_logPanel);
            m_logPanel->showRank(link.mid(5).toInt());
        }
    });
    auto* header = new QHBoxLayout;
    header->addWidget(m_stateLabel);
    header->addSpacing(16);
    header->addWidget(m_progress, 1);
    header->addSpacing(16);
    header->addWidget(m_speedLabel);
    return header;
}

// The tabs: Training, All scalars (with the System panel), Evaluation, Ranks, Logs, Runs.
void MainWindow::buildTabs()
{
    m_tabs->addTab(m_chart, tr("Training"));
    m_tabs->setTabToolTip(0, tr("The built-in trainer's loss, validation metrics and learning rate"));
    // All scalars: the run's own values above, what its ranks used (the System panel) below.
    auto* scalarsPage = new QSplitter(Qt::Vertical, this);
    scalarsPage->addWidget(m_scalarChart);
    scalarsPage->addWidget(m_systemPanel);
    scalarsPage->setStretchFactor(0, 3);
    scalarsPage->setStretchFactor(1, 1);
    m_tabs->addTab(scalarsPage, tr("All scalars"));
    m_tabs->setTabToolTip(1, tr("Every scalar the run reports (a script's printed or logged values too), grouped by prefix"));
    m_tabs->addTab(m_evalTable, tr("Evaluation"));
    m_tabs->setTabToolTip(m_tabs->indexOf(m_evalTable), tr("Each validation pass of the built-in trainer: epoch, step, loss, accuracy, wall time"));
    m_tabs->addTab(m_rankTable, tr("Ranks"));
    m_tabs->addTab(m_logPanel, tr("Logs"));
    m_tabs->addTab(m_runsPanel, tr("Runs"));
    m_tabs->setTabToolTip(m_tabs->indexOf(m_runsPanel), tr("Every run under the output folder: sort, filter, rename, annotate, delete, open and compare"));
}

// The devices and the form keep each other and the actions up to date.
void MainWindow::connectForm()
{
    connect(m_gpuPanel, &GpuPanel::selectionChanged, this, [this] {
        m_jobForm->setWorldSize(m_gpuPanel->worldSize());
        updateActions();
    });
    // Under Slurm the allocation decides the GPUs: this machine's panel does not apply.
    connect(m_jobForm, &JobForm::placeChanged, this, &MainWindow::updateActions);
    connect(m_jobForm, &JobForm::validityChanged, this, [this] {
        updateActions();
        if (m_startWhenFormChecked && !m_jobForm->isChecking()) {
            m_startWhenFormChecked = false;
            startRun(); // an invalid form shows its problems in the banner
        }
    });
    // This run's own ranks (also those of the run just ended, which NVML may still list) are not "other" processes.
    m_gpuPanel->setOwnPids([this] {
        QList<qint64> pids;
        for (const auto& rank : m_supervisor->ranks()) {
            if (rank.pid > 0) pids.append(rank.pid);
        }
        return pids;
    });
    m_jobForm->setWorldSize(m_gpuPanel->worldSize());
}

// The Runs tab resumes, follows and starts new jobs from runs through this window.
void MainWindow::connectRunsPanel()
{
    m_runsPanel->setOutputRootProvider([this] { return currentJob().outputRoot; });
    connect(m_runsPanel->actions(), &RunActions::resumeRequested, this, &MainWindow::resumeRun);
    connect(m_runsPanel->actions(), &RunActions::newJobRequested, this, &MainWindow::newJobFromRun);
    m_runsPanel->setFollowHandler([this](const QString& runDir) { return attachRun(runDir); });
}

// What the run reports reaches the charts, the tables, the log and the header.
void MainWindow::connectSupervisor()
{
    connect(m_supervisor, &supervisor::RunSupervisor::stepReceived, m_chart, &LossChart::append);
    connect(m_supervisor, &supervisor::RunSupervisor::evalReceived, m_chart, &LossChart::appendEval);
    connect(m_supervisor, &supervisor::RunSupervisor::trainingStarted, m_chart, &LossChart::truncateAfter);
    connect(m_supervisor, &supervisor::RunSupervisor::stepReceived, m_evalTable, &EvalTable::noteStep);
    connect(m_supervisor, &supervisor::RunSupervisor::evalReceived, m_evalTable, &EvalTable::append);
    connect(m_supervisor, &supervisor::RunSupervisor::trainingStarted, m_evalTable, &EvalTable::truncateAfter);
    connect(m_supervisor, &supervisor::RunSupervisor::scalarsReceived, m_scalarChart, &ScalarChart::append);
    connect(m_supervisor, &supervisor::RunSupervisor::systemSampled, m_systemPanel, &SystemPanel::append);
    connect(m_supervisor, &supervisor::RunSupervisor::trainingStarted, m_scalarChart, &ScalarChart::truncateAfter);
    connect(m_chart, &LossChart::drained, this, &MainWindow::updateProgress);
    // A script announces no total: its last step is all the header can say.
    connect(m_supervisor, &supervisor::RunSupervisor::scalarsReceived, this, [this](const supervisor::ScalarBatch& batch) {
        if (m_supervisor->job().isScript()) m_speedLabel->setText(tr("step %1").arg(batch.step));
    });
    connect(m_supervisor, &supervisor::RunSupervisor::logLine, m_logPanel, &LogPanel::append);
    connect(m_notifier, &DesktopNotifier::unavailable, m_logPanel, [this](const QString& line) { m_logPanel->append(-1, line); });
    connect(m_supervisor, &supervisor::RunSupervisor::problem, this,
            [this](const QString& line) { showBanner(tr("<b>Warning:</b> %1").arg(line.toHtmlEscaped()), true); });
    connect(m_supervisor, &supervisor::RunSupervisor::stateChanged, this, &MainWindow::onStateChanged);
    connect(m_supervisor, &supervisor::RunSupervisor::finished, this, &MainWindow::onFinished);
    m_rankRefresh.setInterval(kRankRefreshMs);
    connect(&m_rankRefresh, &QTimer::timeout, this, [this] {
        m_rankTable->update(m_supervisor->ranks());
        if (m_supervisor->queueState() != m_shownQueueState) showState();   // Slurm's word on a queued or running job
    });
    connect(&m_preflight, &QFutureWatcher<supervisor::PreflightResult>::finished, this, &MainWindow::onPreflightDone);
}

} // namespace ringmaster::ui
