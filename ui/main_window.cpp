#include "ui/main_window.h"

#include <QAction>
#include <QCloseEvent>
#include <QFileDialog>
#include <QJsonDocument>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QToolBar>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <cmath>

#include "supervisor/app_settings.h"
#include "ui/desktop_notifier.h"
#include "ui/panes/eval_table.h"
#include "ui/panes/gpu_panel.h"
#include "ui/form/trainer_note.h"
#include "ui/form/job_file_dialog.h"
#include "ui/form/job_form.h"
#include "ui/panes/log_panel.h"
#include "ui/form/program_choice.h"
#include "ui/charts/loss_chart.h"
#include "ui/panes/rank_table.h"
#include "ui/resume_history.h"
#include "ui/runs/run_actions.h"
#include "supervisor/run_supervisor.h"
#include "ui/runs/runs_panel.h"
#include "ui/charts/scalar_chart.h"
#include "ui/charts/system_panel.h"
#include "supervisor/trusted_programs.h"

namespace ringmaster::ui {
namespace {

QString stateColor(supervisor::RunState state)
{
    using supervisor::RunState;
    switch (state) {
    case RunState::Starting: return QStringLiteral("#1565c0");
    case RunState::Running: return QStringLiteral("#2e7d32");
    case RunState::Stopping: return QStringLiteral("#ef6c00");
    case RunState::Completed: return QStringLiteral("#1b5e20");
    case RunState::Failed: return QStringLiteral("#b00020");
    case RunState::Stopped: return QStringLiteral("#6d4c41");
    case RunState::Idle: break;
    }
    return QStringLiteral("#616161");
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent)
    , m_supervisor(new supervisor::RunSupervisor(this))
    , m_gpuPanel(new GpuPanel(this))
    , m_jobForm(new JobForm(this))
    , m_chart(new LossChart(this))
    , m_evalTable(new EvalTable(this))
    , m_scalarChart(new ScalarChart(this))
    , m_systemPanel(new SystemPanel(this))
    , m_rankTable(new RankTable(this))
    , m_logPanel(new LogPanel(this))
    , m_runsPanel(new RunsPanel(this))
    , m_tabs(new QTabWidget(this))
    , m_stateLabel(new QLabel(this))
    , m_speedLabel(new QLabel(this))
    , m_banner(new QLabel(this))
    , m_progress(new QProgressBar(this))
    , m_notifier(new DesktopNotifier(m_supervisor, this))
{
    m_notifier->setEnabled(QSettings().value(QLatin1String(supervisor::kDesktopNotificationsKey), true).toBool());
    setWindowTitle(tr("Ringmaster"));
    buildToolBar();

    QWidget* devicesAndForm = buildDevicesAndForm();
    QLayout* header = buildRunHeader();
    buildTabs();
    auto* right = new QWidget(this);
    auto* rightLayout = new QVBoxLayout(right);
    rightLayout->addLayout(header);
    rightLayout->addWidget(m_banner);
    rightLayout->addWidget(m_tabs, 1);

    auto* splitter = new QSplitter(this);
    splitter->addWidget(devicesAndForm);
    splitter->addWidget(right);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({400, 900});
    setCentralWidget(splitter);
    resize(1360, 860);

    connectForm();
    connectRunsPanel();
    connectSupervisor();
    onStateChanged(supervisor::RunState::Idle);
}





MainWindow::~MainWindow() = default; // the supervisor (a child) kills any rank still running

supervisor::JobSpec MainWindow::currentJob() const
{
    return m_jobForm->job(m_gpuPanel->device(), m_gpuPanel->cpuRanks(), m_gpuPanel->selectedGpus());
}

void MainWindow::loadJob(const supervisor::JobSpec& job, JobForm::JobSource source)
{
    m_jobForm->setJob(job, source);
    m_trainerNote->setJobTrainer(job.trainerPath, source == JobForm::JobSource::File ? TrainerNote::Chosen::ByTheJob
                                                                                      : TrainerNote::Chosen::ByYou);
    if (m_gpuPanel->hasGpus() && job.device == QLatin1String("cuda")) m_gpuPanel->setSelectedGpus(job.gpus);
    if (job.device == QLatin1String("cpu")) m_gpuPanel->setCpuRanks(job.nproc);
}

void MainWindow::restoreLastJob()
{
    const QByteArray saved = QSettings().value(QLatin1String(supervisor::kLastJobSettingsKey)).toByteArray();
    if (saved.isEmpty()) return;
    try {
        loadJob(supervisor::JobSpec::fromJson(QJsonDocument::fromJson(saved).object(), tr("the last job")));
    } catch (const supervisor::JobError&) {
        // A job saved by an older version: keep the defaults.
    }
}

bool MainWindow::startRun()
{
    if (!m_jobForm->isValid()) {
        showBanner(m_jobForm->problems().isEmpty() ? tr("The form is still being checked; try again in a moment.")
                                                   : m_jobForm->problems().join(QStringLiteral("<br>")),
                   true);
        return false;
    }
    return startJob(currentJob());
}

void MainWindow::useTrainer(const QString& path)
{
    supervisor::rememberTrainer(path);
    m_jobForm->setTrainerPath(QFileInfo(path).absoluteFilePath());
    m_trainerNote->setJobTrainer(QFileInfo(path).absoluteFilePath(), TrainerNote::Chosen::ByYou);
    updateActions();
}

bool MainWindow::startJob(const supervisor::JobSpec& job)
{
    if (isCheckingStart()) return false;
    if (!confirmFileInterpreter(this, job)) {
        showBanner(tr("<b>Not started:</b> the job file's interpreter %1 was not confirmed; choose another in the Interpreter field")
                       .arg(job.python.toHtmlEscaped()), true);
        return false;
    }
    m_preflightJob = job;
    m_checkingStart = true;
    m_banner->setVisible(false);
    // runPreflight waits for ringmaster-trainer --validate-only (up to a minute): not on this thread.
    // A new future replaces a cancelled one still running, whose result is then never delivered.
    m_preflightCancel = std::make_shared<std::atomic_bool>(false);
    m_preflight.setFuture(QtConcurrent::run([job = m_preflightJob, cancel = m_preflightCancel] {
        return supervisor::runPreflight(job, cancel.get());
    }));
    onStateChanged(m_supervisor->state());
    return true;
}

bool MainWindow::resumeRun(const QString& runDir, const QString& checkpoint)
{
    const auto state = m_supervisor->state();
    if (isCheckingStart() || (state != supervisor::RunState::Idle && !supervisor::isFinal(state))) {
        showBanner(tr("A run is active: stop it before resuming another."), true);
        return false;
    }
    supervisor::JobSpec job;
    try {
        job = supervisor::JobSpec::loadFromRun(runDir);
    } catch (const supervisor::JobError& e) {
        showBanner(tr("<b>Not resumed:</b> %1").arg(e.message().toHtmlEscaped()), true);
        return false;
    }
    return startJob(job.forResume(checkpoint.isEmpty() ? runDir : checkpoint));
}

bool MainWindow::newJobFromRun(const QString& runDir)
{
    try {
        const auto job = supervisor::JobSpec::loadFromRun(runDir).forNewLaunch();
        loadJob(job, JobForm::JobSource::File); // a run folder may come from someone else
    } catch (const supervisor::JobError& e) {
        showBanner(tr("<b>Not loaded:</b> %1").arg(e.message().toHtmlEscaped()), true);
        return false;
    }
    return true;
}

void MainWindow::startWhenFormChecked()
{
    m_startWhenFormChecked = m_jobForm->isChecking();
    if (!m_startWhenFormChecked) startRun();
}

void MainWindow::cancelStart()
{
    if (!m_checkingStart) return;
    // The validation process is killed; the (cancelled) result is dropped when it arrives.
    if (m_preflightCancel) m_preflightCancel->store(true);
    m_checkingStart = false;
    showBanner(tr("Start cancelled."), false);
    onStateChanged(m_supervisor->state());
}

void MainWindow::onPreflightDone()
{
    if (!m_checkingStart) return; // cancelled
    m_checkingStart = false;
    launch(m_preflightJob, m_preflight.result());
}

void MainWindow::clearRunView(const supervisor::JobSpec& job)
{
    m_chart->clear();
    m_evalTable->clear();
    m_scalarChart->clear();
    m_systemPanel->clear();
    m_logPanel->reset(job.worldSize());
    // A script has no built-in trainer metrics: its values are all in "All scalars".
    if (job.isScript()) m_tabs->setCurrentIndex(m_tabs->indexOf(m_scalarChart->parentWidget()));
}

void MainWindow::followRun(const supervisor::JobSpec& job)
{
    m_progress->setValue(0);
    m_progress->setVisible(!job.isScript()); // a script's total steps are unknown
    m_speedLabel->clear();
    m_rankRefresh.start();
    m_rankTable->update(m_supervisor->ranks());
    setWindowTitle(tr("Ringmaster — %1").arg(m_supervisor->runDir()));
    m_runsPanel->setActiveRun(m_supervisor->runDir());   // the run appears (as running) in the Runs tab
}

bool MainWindow::attachRun(const QString& runDir)
{
    const auto state = m_supervisor->state();
    if (isCheckingStart() || (state != supervisor::RunState::Idle && !supervisor::isFinal(state))) {
        showBanner(tr("A run is active: stop it before following another."), true);
        return false;
    }
    supervisor::JobSpec job;
    try {
        job = supervisor::JobSpec::loadFromRun(runDir);
    } catch (const supervisor::JobError& e) {
        showBanner(tr("<b>Not followed:</b> %1").arg(e.message().toHtmlEscaped()), true);
        return false;
    }
    clearRunView(job);   // attach() replays what the run wrote so far into the cleared views
    QString error;
    if (!m_supervisor->attach(runDir, &error)) {
        showBanner(tr("<b>Not followed:</b> %1").arg(error.toHtmlEscaped()), true);
        onStateChanged(m_supervisor->state());
        return false;
    }
    m_banner->setVisible(false);
    followRun(job);
    if (!job.isScript()) m_tabs->setCurrentWidget(m_chart);   // from the Runs tab to the live chart
    return true;
}

void MainWindow::launch(const supervisor::JobSpec& job, const supervisor::PreflightResult& checked)
{
    clearRunView(job);
    QString error;
    if (!checked.ok() || !m_supervisor->start(job, checked, &error)) {
        if (error.isEmpty()) error = checked.error;
        showBanner(tr("<b>Not started:</b> %1").arg(error.toHtmlEscaped()), true);
        onStateChanged(m_supervisor->state());
        return;
    }
    QSettings().setValue(QLatin1String(supervisor::kLastJobSettingsKey), QJsonDocument(job.toJson()).toJson(QJsonDocument::Compact));
    followRun(job);
    if (!job.resume.isEmpty()) {   // the charts continue
        replayResumedHistory(*m_chart, job.resume);
        replayResumedScalars(*m_scalarChart, job.resume);
        replayResumedEvals(*m_evalTable, job.resume);
    }
}

void MainWindow::showState()
{
    const bool checking = isCheckingStart();
    const supervisor::RunState state = m_supervisor->state();
    QString text = QStringLiteral("<span style='font-size:15pt; font-weight:600; color:%1'>● %2</span>")
                       .arg(checking ? QStringLiteral("#1565c0") : stateColor(state),
                            checking ? tr("checking…") : supervisor::runStateName(state));
    m_shownQueueState = m_supervisor->queueState();
    if (!checking && !m_supervisor->jobId().isEmpty() && !m_shownQueueState.isEmpty()) {
        text += QStringLiteral("&nbsp;&nbsp;<span style='color:#455a64'>%1</span>")
                    .arg(tr("Slurm job %1: %2").arg(m_supervisor->jobId(), m_shownQueueState).toHtmlEscaped());
    }
    m_stateLabel->setText(text);
}

void MainWindow::onStateChanged(supervisor::RunState state)
{
    showState();
    if (state == supervisor::RunState::Running) m_chart->setStepsPerEpoch(m_supervisor->stepsPerEpoch());
    updateActions();
}

void MainWindow::onFinished(supervisor::RunState state)
{
    m_chart->flush();
    m_scalarChart->flush();
    m_systemPanel->flush();
    m_logPanel->flush();
    m_rankRefresh.stop();
    m_rankTable->update(m_supervisor->ranks());
    m_runsPanel->setActiveRun(QString());   // the run's row updates to how it ended
    if (state == supervisor::RunState::Failed) {
        const auto cause = m_supervisor->rootCause();
        QString html = tr("<b>Run failed:</b> %1").arg(cause.summary().toHtmlEscaped());
        if (const QStringList lines = supervisor::reportableLines(cause.lastLines, static_cast<int>(cause.lastLines.size())); !lines.isEmpty()) {
            QStringList escaped;
            for (const auto& line : lines) escaped << line.toHtmlEscaped();
            html += QStringLiteral("<pre style='margin:4px 0'>%1</pre>").arg(escaped.join(QLatin1Char('\n')));
        }
        if (cause.rank >= 0) html += tr("<a href='rank:%1'>Open rank %1's log</a>").arg(cause.rank);
        showBanner(html, true);
    } else {
        showBanner(tr("Run %1 — %2").arg(supervisor::runStateName(state), m_supervisor->runDir().toHtmlEscaped()), false);
    }
    if (m_closeWhenDone) close();
}

void MainWindow::updateProgress(const supervisor::StepMetric& latest)
{
    const qint64 total = m_supervisor->totalSteps();
    m_progress->setMaximum(static_cast<int>(std::max<qint64>(total, latest.step)));
    m_progress->setValue(static_cast<int>(latest.step));
    const double eta = latest.step > 0 && total > 0 ? (total - latest.step) * latest.wallTime / latest.step : std::nan("");
    m_speedLabel->setText(tr("epoch %1 · %2 samples/s · ETA %3").arg(latest.epoch).arg(latest.samplesPerSec, 0, 'f', 0)
                              .arg(supervisor::formatDuration(eta)));
}

void MainWindow::updateActions()
{
    using supervisor::RunState;
    const RunState state = m_supervisor->state();
    const bool checking = isCheckingStart();
    const bool active = state == RunState::Starting || state == RunState::Running || state == RunState::Stopping;
    const bool valid = m_jobForm->isValid();
    // GPUs here and a trainer without CUDA: a GPU job cannot run (the note says why and how to fix it).
    // A job file naming a trainer of its own is checked at Start instead (pre-flight reads that trainer).
    const bool noGpuTrainer = m_trainerNote->blocksGpuRuns() && !m_jobForm->isSlurm() && !m_jobForm->isScript() &&
                              m_gpuPanel->device() == QLatin1String("cuda") && currentJob().trainerPath.isEmpty();
    m_start->setEnabled(!active && !checking && valid && !noGpuTrainer);
    if (checking) m_start->setToolTip(tr("Checking the job (ringmaster-trainer --validate-only)…"));
    else if (noGpuTrainer) m_start->setToolTip(m_trainerNote->gpuProblem());
    else if (valid && m_jobForm->isSlurm()) m_start->setToolTip(tr("Submit the job to Slurm and follow it here"));
    else if (valid) m_start->setToolTip(tr("Start one trainer per selected GPU (or CPU rank)"));
    else if (m_jobForm->problems().isEmpty()) m_start->setToolTip(tr("Checking the output folder…"));
    else m_start->setToolTip(tr("Fix the form first:\n%1").arg(m_jobForm->problems().join(QLatin1Char('\n'))));
    m_stop->setEnabled(checking || state == RunState::Starting || state == RunState::Running);
    m_stop->setToolTip(checking ? tr("Cancel this start: nothing is launched")
                                : tr("Graceful stop: every rank finishes its step, rank 0 writes a final checkpoint"));
    m_kill->setEnabled(active);
    m_checkpoint->setEnabled(state == RunState::Running);
    m_jobForm->setEnabled(!active && !checking);
    m_gpuPanel->setEnabled(!active && !checking && !m_jobForm->isSlurm());
    m_devicesNote->setVisible(m_jobForm->isSlurm());
}

void MainWindow::showBanner(const QString& html, bool error)
{
    m_banner->setStyleSheet(error ? QStringLiteral("background:#fdecea; color:#611a15; border:1px solid #f5c2c7; padding:8px;")
                                  : QStringLiteral("background:#edf7ed; color:#1e4620; border:1px solid #c3e6cb; padding:8px;"));
    m_banner->setText(html);
    m_banner->setVisible(true);
}

void MainWindow::saveJobAs()
{
    QFileDialog dialog(this);
    setUpJobFileDialog(dialog, QFileDialog::AcceptSave);
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) return;
    const QString path = dialog.selectedFiles().first();
    try {
        currentJob().save(path);
    } catch (const supervisor::JobError& e) {
        QMessageBox::warning(this, tr("Save job"), e.message());
    }
}

bool MainWindow::openJobFile(const QString& path, QString* error)
{
    try {
        loadJob(supervisor::JobSpec::load(path), JobForm::JobSource::File);
        return true;
    } catch (const supervisor::JobError& e) {
        showBanner(tr("Not loaded: %1. The form keeps the job it had; fix the file, or use <i>Load job…</i>.")
                       .arg(e.message().toHtmlEscaped()),
                   true);
        if (error) *error = e.message();
        return false;
    }
}

void MainWindow::openJob()
{
    QFileDialog dialog(this);
    setUpJobFileDialog(dialog, QFileDialog::AcceptOpen);
    if (dialog.exec() != QDialog::Accepted || dialog.selectedFiles().isEmpty()) return;
    const QString path = dialog.selectedFiles().first();
    try {
        loadJob(supervisor::JobSpec::load(path), JobForm::JobSource::File);
    } catch (const supervisor::JobError& e) {
        QMessageBox::warning(this, tr("Load job"), e.message());
    }
}

void MainWindow::closeEvent(QCloseEvent* event)
{
    using supervisor::RunState;
    const RunState state = m_supervisor->state();
    const bool active = state == RunState::Starting || state == RunState::Running || state == RunState::Stopping;
    if (!active) {
        cancelStart();
        event->accept();
        return;
    }
    if (m_confirmOnClose) {
        // A Slurm job does not need this window: it can be left running and followed again later.
        const bool slurmJob = !m_supervisor->jobId().isEmpty() && state != RunState::Stopping;
        QMessageBox box(QMessageBox::Question, tr("A run is active"),
                        slurmJob ? tr("Slurm job %1 runs on the cluster. Stop it (every rank finishes its step and writes a final "
                                      "checkpoint) and close, or leave it running and follow it again later from the Runs tab "
                                      "(Open) or with ringmaster-launch --attach?").arg(m_supervisor->jobId())
                                 : tr("Stop the run (every rank finishes its step and writes a final checkpoint) and close?"),
                        QMessageBox::NoButton, this);
        QPushButton* stop = box.addButton(tr("Stop and close"), QMessageBox::AcceptRole);
        stop->setObjectName(QStringLiteral("stopAndClose"));
        QPushButton* leave = nullptr;
        if (slurmJob) {
            leave = box.addButton(tr("Leave it running on the cluster"), QMessageBox::ActionRole);
            leave->setObjectName(QStringLiteral("leaveRunning"));
        }
        box.setDefaultButton(box.addButton(QMessageBox::Cancel));
        box.exec();
        const bool chosen = box.clickedButton() == stop || (leave && box.clickedButton() == leave);
        if (chosen && (supervisor::isFinal(m_supervisor->state()) || (box.clickedButton() == leave && leaveRunning()))) {
            event->accept();   // it ended while the question was open, or it was left running
            return;
        }
        if (box.clickedButton() != stop) {
            event->ignore();
            return;
        }
    }
    // Close once the ranks are down; the supervisor's destructor would kill them otherwise.
    m_closeWhenDone = true;
    m_supervisor->requestStop();
    event->ignore();
}

bool MainWindow::leaveRunning()
{
    const QString left = m_supervisor->leaveRunning();
    if (left.isEmpty()) return false;   // it ended, or a stop began, while the question was open
    m_rankRefresh.stop();
    m_runsPanel->setActiveRun(QString());   // the Runs tab asks Slurm about it, as about any run it holds
    m_logPanel->append(-1, left);
    m_logPanel->flush();
    showState();
    updateActions();
    showBanner(left.toHtmlEscaped(), false);
    return true;
}

} // namespace ringmaster::ui
