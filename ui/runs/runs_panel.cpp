#include "ui/runs/runs_panel.h"

#include "protocol/run_lock.h"

#include <QColorDialog>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>
#include <QtConcurrent>

#include <algorithm>
#include <utility>

#include "ui/panes/eval_table.h"
#include "ui/runs/hyperparameter_table.h"
#include "ui/panes/log_panel.h"
#include "runs/opened_run.h"
#include "protocol/run_lock.h"
#include "ui/runs/run_colours.h"
#include "ui/runs/run_summary_html.h"
#include "ui/runs/run_actions.h"
#include "runs/run_files.h"
#include "runs/run_listing.h"
#include "ui/runs/runs_folder_watch.h"
#include "ui/runs/runs_model.h"
#include "ui/charts/scalar_chart.h"
#include "runs/slurm_job.h"
#include "ui/runs/slurm_queue_states.h"
#include "ui/charts/system_panel.h"

namespace ringmaster::ui {
namespace {

QString cleanAbsolute(const QString& path) { return QDir::cleanPath(QDir(path).absolutePath()); }

} // namespace

void RunsPanel::addRoot(const QString& folder)
{
    const QString clean = cleanAbsolute(folder);
    if (!m_addedRoots.contains(clean)) m_addedRoots << clean;
}

QStringList RunsPanel::roots() const
{
    QStringList candidates;
    if (m_outputRoot) {
        const QString root = m_outputRoot();
        if (!root.isEmpty()) candidates << cleanAbsolute(root);
    }
    candidates << m_addedRoots;
    QStringList result;
    for (const QString& root : candidates) {
        if (QFileInfo(root).isDir() && !result.contains(root)) result << root;
    }
    return result;
}

void RunsPanel::refresh()
{
    if (m_listing.isRunning()) {
        m_refreshAgain = true;   // a run started or ended while reading: read once more after
        return;
    }
    m_listedOnce = true;
    m_status->setText(tr("Reading runs…"));
    m_listing.setFuture(QtConcurrent::run([folders = roots(), watched = m_folderWatch->watched()] {
        Listing listing;
        // Before the runs are read: a change made while they are read differs from these afterwards.
        QStringList before = folders;
        for (const QString& folder : watched) {
            if (!before.contains(folder)) before << folder;
        }
        listing.signatures = RunsFolderWatch::signatures(before);
        try {
            listing.runs = runs::listRuns(folders);
        } catch (const runs::RunsError& e) {
            listing.error = e.message();   // a root removed since roots() looked
        }
        for (const runs::RunRecord& run : std::as_const(listing.runs)) {   // Slurm is asked apart, never here
            if (const QString job = runs::unfinishedSlurmJob(run); !job.isEmpty()) listing.slurmJobs.insert(QDir::cleanPath(run.path), job);
        }
        if (listing.error.isEmpty()) listing.watch = RunsFolderWatch::foldersToWatch(folders, listing.runs);
        return listing;
    }));
}

void RunsPanel::onListed()
{
    const Listing listing = m_listing.result();
    const QStringList selected = selectedRuns();
    m_model->setRuns(listing.runs);
    m_queue->watch(listing.slurmJobs);
    if (listing.error.isEmpty()) m_folderWatch->watch(listing.watch, listing.signatures);
    m_model->setQueueStates(m_queue->states());   // what is known now; Slurm's new answers follow (updated)
    selectRuns(selected);
    const QStringList listedRoots = roots();
    if (!listing.error.isEmpty()) {
        m_status->setText(listing.error);
    } else if (listedRoots.isEmpty()) {
        m_status->setText(tr("No runs folder yet: runs appear here once the first one starts."));
    } else {
        m_status->setText(tr("%n run(s) in %1", nullptr, static_cast<int>(listing.runs.size()))
                              .arg(QDir::toNativeSeparators(listedRoots.join(QStringLiteral(", ")))));
    }
    updateButtons();
    applyCompareColours();   // a colour chosen since, or a run renamed and back: the open comparison follows
    Q_EMIT refreshed();
    if (m_refreshAgain) {
        m_refreshAgain = false;
        refresh();
    }
}

void RunsPanel::setActiveRun(const QString& runDir)
{
    if (!runDir.isEmpty()) {
        const QString parent = QFileInfo(cleanAbsolute(runDir)).absolutePath();
        if (!roots().contains(parent)) addRoot(parent);   // a run dir given outright, outside the output root
    }
    m_model->setActiveRun(runDir);
    refresh();
}

QStringList RunsPanel::selectedRuns() const
{
    QList<QModelIndex> rows = m_table->selectionModel()->selectedRows(RunsModel::Name);
    std::sort(rows.begin(), rows.end(), [](const QModelIndex& a, const QModelIndex& b) { return a.row() < b.row(); });
    QStringList paths;
    for (const QModelIndex& index : rows) paths << index.data(RunsModel::kPathRole).toString();
    return paths;
}

void RunsPanel::selectRuns(const QStringList& paths)
{
    QItemSelection selection;
    for (const QString& path : paths) {
        const int row = m_model->rowOf(path);
        if (row < 0) continue;
        const QModelIndex index = m_proxy->mapFromSource(m_model->index(row, 0));
        if (index.isValid()) selection.select(index, index);
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

const runs::RunRecord* RunsPanel::recordOf(const QString& path) const
{
    const int row = m_model->rowOf(path);
    return row < 0 ? nullptr : &m_model->runs()[row];
}

void RunsPanel::updateButtons()
{
    const QStringList selected = selectedRuns();
    const bool one = selected.size() == 1;
    m_open->setEnabled(one);
    m_compare->setEnabled(selected.size() >= 2);
    m_rename->setEnabled(one);
    m_notes->setEnabled(one);
    const bool running = one && (cleanAbsolute(selected.first()) == m_model->activeRun() || m_model->isHeldBySlurm(selected.first()));
    m_delete->setEnabled(one && !running);
    m_delete->setToolTip(running ? tr("This run is running now (or queued in Slurm): stop it before deleting it")
                                 : tr("Delete the run's folder and everything in it, after asking"));
}

bool RunsPanel::saveNotes(const QString& runDir, const runs::RunNotes& notes)
{
    try {
        runs::writeRunNotes(runDir, notes);
    } catch (const runs::RunsError& e) {
        m_status->setText(e.message());
        return false;
    }
    refresh();
    return true;
}

void RunsPanel::renameSelected()
{
    const runs::RunRecord* run = recordOf(selectedRuns().value(0));
    if (!run) return;
    bool ok = false;
    const QString title = QInputDialog::getText(this, tr("Rename run"),
                                                tr("Title of %1 (its folder keeps its name; empty shows the folder's name):").arg(run->name),
                                                QLineEdit::Normal, run->title, &ok);
    if (ok) saveNotes(run->path, {title, run->notes});
}

void RunsPanel::editNotesOfSelected()
{
    const runs::RunRecord* run = recordOf(selectedRuns().value(0));
    if (!run) return;
    bool ok = false;
    const QString notes = QInputDialog::getMultiLineText(this, tr("Notes"), tr("Notes on %1:").arg(run->name), run->notes, &ok);
    if (ok) saveNotes(run->path, {run->title, notes});
}

bool RunsPanel::deleteRun(const QString& runDir)
{
    const QString path = cleanAbsolute(runDir);
    if ((!m_model->activeRun().isEmpty() && path == m_model->activeRun()) || m_model->isHeldBySlurm(path)) {
        m_status->setText(tr("%1 is running now: stop it before deleting it.").arg(QFileInfo(path).fileName()));
        return false;
    }
    const runs::RunRecord* run = recordOf(path);
    if (!run || !runs::isRunDirectory(path)) {
        m_status->setText(tr("%1 is not a listed run: nothing deleted.").arg(path));
        return false;
    }
    // Another launcher or window runs it now (its supervisor lock is held): asked before and again after the question.
    const auto heldBy = [](const QString& dir) {
        std::string holder;
        return protocol::probeRunLock(QFile::encodeName(dir).toStdString(), &holder) == protocol::RunLockState::Held
                   ? QString::fromStdString(holder) : QString();
    };
    if (const QString holder = heldBy(path); !holder.isEmpty()) {
        m_status->setText(tr("%1 is being run right now by %2: stop that run before deleting it.").arg(QFileInfo(path).fileName(), holder));
        return false;
    }
    if (m_confirmDeletes) {
        const auto answer = QMessageBox::question(
            this, tr("Delete run"),
            tr("Delete the run %1 and everything in it?\n\n%2\n\nThis cannot be undone.").arg(RunsModel::labelOf(*run), path),
            QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel);
        if (answer != QMessageBox::Yes) return false;
        if (const QString holder = heldBy(path); !holder.isEmpty()) {
            m_status->setText(tr("%1 is being run right now by %2: stop that run before deleting it.").arg(QFileInfo(path).fileName(), holder));
            return false;
        }
    }
    if (!QDir(path).removeRecursively()) {
        m_status->setText(tr("%1 could not be deleted completely: check its permissions.").arg(path));
        refresh();
        return false;
    }
    refresh();
    return true;
}

void RunsPanel::deleteSelected()
{
    const QStringList selected = selectedRuns();
    if (selected.size() == 1) deleteRun(selected.first());
}

void RunsPanel::addFolder()
{
    const QString folder = QFileDialog::getExistingDirectory(this, tr("Add a folder of runs"));
    if (folder.isEmpty()) return;
    addRoot(folder);
    refresh();
}

void RunsPanel::openRun(const QString& runDir)
{
    if (runDir.isEmpty()) return;
    if (m_model->isHeldBySlurm(runDir) && m_follow && m_follow(runDir)) return;   // followed live in the Training tab
    openRunsInChart({runDir});
}

void RunsPanel::openRunsInChart(const QStringList& runDirs)
{
    if (runDirs.isEmpty()) {   // the last tick removed: an empty chart
        m_openingPaths.clear();
        m_opening.setFuture(QtConcurrent::run([] { return QList<runs::OpenedRun>(); }));
        return;
    }
    // Each run is drawn under its label; two runs of the same title keep their folder's name too.
    QList<std::pair<QString, QString>> jobs;   // path, label
    QStringList labels;
    for (const QString& path : runDirs) {
        const runs::RunRecord* run = recordOf(path);
        QString label = run ? RunsModel::labelOf(*run) : QFileInfo(path).fileName();
        if (labels.contains(label)) label += QStringLiteral(" (%1)").arg(QFileInfo(path).fileName());
        labels << label;
        jobs.append({path, label});
    }
    m_openingPaths = runDirs;
    m_status->setText(tr("Reading %n run(s)…", nullptr, static_cast<int>(runDirs.size())));
    m_opening.setFuture(QtConcurrent::run([jobs] {
        QList<runs::OpenedRun> opened;
        for (const auto& [path, label] : jobs) {
            // The first run's logs too, as many lines as the view keeps.
            opened.append(runs::readOpenedRun(path, label, opened.isEmpty() ? static_cast<int>(LogPanel::kLinesInMemory) : 0));
        }
        return opened;
    }));
}

void RunsPanel::onOpened()
{
    const QList<runs::OpenedRun> opened = m_opening.result();
    m_chart->clear();
    for (const QString& label : std::as_const(m_openLabels)) m_chart->setRunColour(label, QColor());
    m_openLabels.clear();
    m_openJobs.clear();
    m_openColours.clear();
    for (const runs::OpenedRun& run : opened) {
        m_openLabels << run.label;
        m_openJobs << run.job;
    }
    m_openRuns = m_openingPaths;
    m_model->setTickedRuns(m_openRuns);   // the ticks show what the chart draws
    applyCompareColours();   // before the points: the panels are built once, in the runs' colours
    QList<runs::RunRecord> records;
    for (const runs::OpenedRun& run : opened) {
        for (const runs::ScalarRecord& point : run.table.records) {
            m_chart->appendPoint(run.label, point.name, point.step, point.wallTime.value_or(0.0), point.value);
        }
    }
    m_chart->flush();
    int ranks = 0;
    const std::map<int, QStringList> noLogs;
    const auto& logs = opened.isEmpty() ? noLogs : opened.first().logLines;
    for (const auto& entry : logs) ranks = std::max(ranks, entry.first + 1);
    m_logs->reset(ranks);
    for (const auto& [rank, lines] : logs) {
        for (const QString& line : lines) m_logs->append(rank, line);
    }
    m_logs->flush();
    m_evals->setReading(opened.isEmpty() ? EvalReading{} : opened.first().evals);
    m_system->showRecords(opened.isEmpty() ? QList<runs::ScalarRecord>{} : opened.first().system.records);
    for (int i = 0; i < m_openingPaths.size(); ++i) {
        runs::RunRecord record;
        if (const runs::RunRecord* listed = recordOf(m_openingPaths[i])) record = *listed;
        record.path = m_openingPaths[i];
        if (i < opened.size()) {
            record.problems = opened[i].record.problems;   // as read now, not as last listed
            record.problems << opened[i].table.problems;
            if (i == 0) record.problems << opened[i].evals.problems;
            record.problems.removeDuplicates();
        }
        records.append(record);
    }
    showSummary(records);
    showProblems(records);
    if (records.isEmpty()) m_summary->setText(tr("<i>Open a run (double-click) to see its summary and scalars here.</i>"));
    m_status->setText(tr("Opened %n run(s).", nullptr, static_cast<int>(m_openRuns.size())));
    Q_EMIT runsOpened(m_openRuns);
}

void RunsPanel::applyCompareColours()
{
    if (m_openLabels.isEmpty() || m_openLabels.size() != m_openRuns.size()) return;
    QList<QColor> colours;
    if (m_openRuns.size() >= 2) {   // one run alone: its scalars keep the chart's colour cycle
        QList<runs::RunRecord> records;
        for (const QString& path : std::as_const(m_openRuns)) {
            runs::RunRecord record;
            if (const runs::RunRecord* listed = recordOf(path)) record = *listed;
            record.path = path;
            record.name = QFileInfo(QDir::cleanPath(path)).fileName();
            records << record;
        }
        colours = compareColours(records);
    }
    const bool changed = colours != m_openColours;
    m_openColours = colours;
    for (int i = 0; i < m_openLabels.size(); ++i) {
        // setRunColour redraws the panels: only when a colour really changed (a refresh keeps the user's zoom).
        if (changed) m_chart->setRunColour(m_openLabels[i], colours.value(i));
    }
    m_hyperparameters->setRuns(m_openLabels, m_openColours, m_openJobs);
}

bool RunsPanel::saveRunColour(const QString& runDir, const QColor& colour)
{
    try {
        runs::writeRunColour(runDir, colour.isValid() ? colour.name(QColor::HexRgb) : QString());
    } catch (const runs::RunsError& e) {
        m_status->setText(e.message());
        return false;
    }
    refresh();
    return true;
}

void RunsPanel::chooseColourOfSelected()
{
    const runs::RunRecord* run = recordOf(selectedRuns().value(0));
    if (!run) return;
    const QString path = run->path;   // the dialog runs the event loop: the listing may change under it
    const QColor colour = QColorDialog::getColor(runColour(*run), this, tr("Colour of %1").arg(RunsModel::labelOf(*run)));
    if (colour.isValid()) saveRunColour(path, colour);
}

void RunsPanel::showTableMenu(const QPoint& position)
{
    const QModelIndex index = m_table->indexAt(position);
    if (!index.isValid()) return;
    const QString path = index.data(RunsModel::kPathRole).toString();
    if (!selectedRuns().contains(path)) selectRuns({path});
    QMenu menu(this);
    QAction* colour = menu.addAction(tr("Colour…"));
    connect(colour, &QAction::triggered, this, &RunsPanel::chooseColourOfSelected);
    colour->setToolTip(tr("The colour this run is drawn in when compared (kept in its notes.json)"));
    const runs::RunRecord* run = recordOf(path);
    QAction* automatic = menu.addAction(tr("Automatic colour"));
    connect(automatic, &QAction::triggered, this, [this, path] { saveRunColour(path, QColor()); });
    automatic->setEnabled(run && !run->colour.isEmpty());
    colour->setEnabled(selectedRuns().size() == 1);
    menu.exec(m_table->viewport()->mapToGlobal(position));
}

void RunsPanel::showSummary(const QList<runs::RunRecord>& records)
{
    m_summary->setText(runSummaryHtml(records));
}

void RunsPanel::showProblems(const QList<runs::RunRecord>& records)
{
    QStringList lines;
    const QString noSummary = QString::fromLatin1(runs::kSummaryFile) + QStringLiteral(" missing");
    for (const runs::RunRecord& run : records) {
        QStringList problems = run.problems;
        const QString path = cleanAbsolute(run.path);
        if (path == m_model->activeRun() || m_model->isHeldBySlurm(path)) {
            problems.removeIf([&](const QString& problem) { return problem.startsWith(noSummary); });   // it is going on
        }
        if (problems.isEmpty()) continue;
        lines << tr("<b>%1</b>: not everything could be read, shown is what could: %2")
                     .arg(RunsModel::labelOf(run).toHtmlEscaped(), problems.join(QStringLiteral("; ")).toHtmlEscaped());
    }
    m_problemsBanner->setText(lines.join(QStringLiteral("<br>")));
    m_problemsBanner->setVisible(!lines.isEmpty());
}

void RunsPanel::showEvent(QShowEvent* event)
{
    QWidget::showEvent(event);
    m_folderWatch->setPolling(true);
    if (!m_listedOnce) refresh();
    else m_folderWatch->checkAll();   // what changed while the tab was hidden
}

void RunsPanel::hideEvent(QHideEvent* event)
{
    QWidget::hideEvent(event);
    m_folderWatch->setPolling(false);
}

} // namespace ringmaster::ui
