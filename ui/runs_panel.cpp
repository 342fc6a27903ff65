#include "runs_panel.h"

#include "run_lock.h"

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

#include "eval_table.h"
#include "hyperparameter_table.h"
#include "log_panel.h"
#include "opened_run.h"
#include "run_lock.h"
#include "run_colours.h"
#include "run_summary_html.h"
#include "run_actions.h"
#include "run_files.h"
#include "run_listing.h"
#include "runs_folder_watch.h"
#include "runs_model.h"
#include "scalar_chart.h"
#include "slurm_job.h"
#include "slurm_queue_states.h"
#include "system_panel.h"

namespace ringmaster::ui {
namespace {

constexpr int kSummaryWidth = 320;
constexpr int kTableShare = 2;    // the table over the chart, by height
constexpr int kChartShare = 3;

QString cleanAbsolute(const QString& path) { return QDir::cleanPath(QDir(path).absolutePath()); }

} // namespace

RunsPanel::RunsPanel(QWidget* parent)
    : QWidget(parent)
    , m_model(new RunsModel(this))
    , m_proxy(new RunsFilterProxy(this))
    , m_table(new QTableView(this))
    , m_filter(new QLineEdit(this))
    , m_status(new QLabel(this))
    , m_summary(new QLabel(this))
    , m_chart(new ScalarChart(this))
    , m_logs(new LogPanel(this))
    , m_hyperparameters(new HyperparameterTable(this))
    , m_evals(new EvalTable(this))
    , m_system(new SystemPanel(this))
    , m_problemsBanner(new QLabel(this))
    , m_detailTabs(new QTabWidget(this))
    , m_open(new QPushButton(tr("Open"), this))
    , m_compare(new QPushButton(tr("Compare"), this))
    , m_rename(new QPushButton(tr("Rename…"), this))
    , m_notes(new QPushButton(tr("Notes…"), this))
    , m_delete(new QPushButton(tr("Delete…"), this))
    , m_actions(new RunActions([this] { return selectedRuns(); }, [this] { return m_model->activeRun(); }, this))
    , m_queue(new SlurmQueueStates(this))
    , m_folderWatch(new RunsFolderWatch(this))
{
    m_proxy->setSourceModel(m_model);
    m_table->setModel(m_proxy);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(RunsModel::Started, Qt::DescendingOrder);   // newest first
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    m_table->horizontalHeader()->setSectionResizeMode(RunsModel::Name, QHeaderView::Stretch);
    m_table->setToolTip(tr("Double-click a run to open it; select several and Compare to overlay them"));

    m_filter->setPlaceholderText(tr("Filter by name, title, model, status or notes"));
    m_filter->setClearButtonEnabled(true);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    auto* refresh = new QPushButton(tr("Refresh"), this);
    refresh->setToolTip(tr("List the runs again"));
    connect(refresh, &QPushButton::clicked, this, &RunsPanel::refresh);
    auto* addFolderButton = new QPushButton(tr("Add folder…"), this);
    addFolderButton->setToolTip(tr("Also list the runs in another folder (for this session)"));
    connect(addFolderButton, &QPushButton::clicked, this, &RunsPanel::addFolder);
    auto* top = new QHBoxLayout;
    top->addWidget(m_filter, 1);
    top->addWidget(refresh);
    top->addWidget(addFolderButton);

    m_open->setToolTip(tr("Draw the run's scalars below and show its summary; a run Slurm still runs is followed live instead"));
    m_compare->setToolTip(tr("Overlay the selected runs' scalars below"));
    m_rename->setToolTip(tr("Give the run a title (stored in its notes.json; the folder keeps its name)"));
    m_notes->setToolTip(tr("Write notes on the run (stored in its notes.json)"));
    m_delete->setToolTip(tr("Delete the run's folder and everything in it, after asking"));
    connect(m_open, &QPushButton::clicked, this, [this] { openRun(selectedRuns().value(0)); });
    connect(m_compare, &QPushButton::clicked, this, [this] { openRunsInChart(selectedRuns()); });
    connect(m_rename, &QPushButton::clicked, this, &RunsPanel::renameSelected);
    connect(m_notes, &QPushButton::clicked, this, &RunsPanel::editNotesOfSelected);
    connect(m_delete, &QPushButton::clicked, this, &RunsPanel::deleteSelected);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
        openRun(index.data(RunsModel::kPathRole).toString());
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this, &RunsPanel::updateButtons);
    // A run ticked or unticked in the table joins or leaves the chart (once per burst of ticks).
    m_reopenTicked.setSingleShot(true);
    m_reopenTicked.setInterval(0);
    connect(m_model, &RunsModel::tickToggled, &m_reopenTicked, qOverload<>(&QTimer::start));
    connect(&m_reopenTicked, &QTimer::timeout, this, [this] { openRunsInChart(m_model->tickedRuns()); });
    m_table->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_table, &QTableView::customContextMenuRequested, this, &RunsPanel::showTableMenu);
    auto* buttons = new QHBoxLayout;
    for (QPushButton* button : {m_open, m_compare, m_rename, m_notes, m_delete}) buttons->addWidget(button);
    buttons->addWidget(m_actions);
    buttons->addSpacing(12);
    buttons->addWidget(m_status, 1);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* listArea = new QWidget(this);
    auto* listLayout = new QVBoxLayout(listArea);
    listLayout->setContentsMargins(0, 0, 0, 0);
    listLayout->addLayout(top);
    listLayout->addWidget(m_table, 1);
    listLayout->addLayout(buttons);

    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::RichText);
    m_summary->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setMinimumWidth(kSummaryWidth);
    m_summary->setMaximumWidth(2 * kSummaryWidth);
    m_summary->setText(tr("<i>Open a run (double-click) to see its summary and scalars here.</i>"));
    auto* details = new QSplitter(Qt::Horizontal, this);
    details->addWidget(m_summary);
    m_detailTabs->addTab(m_chart, tr("Scalars"));
    m_detailTabs->addTab(m_evals, tr("Evaluation"));
    m_detailTabs->setTabToolTip(1, tr("The evaluations of the run opened, from its eval.csv (of the first run, when comparing)"));
    m_detailTabs->addTab(m_system, tr("System"));
    m_detailTabs->setTabToolTip(m_detailTabs->indexOf(m_system), tr("What each rank used, from the run's system.csv (of the first run, when comparing)"));
    m_detailTabs->addTab(m_logs, tr("Logs"));
    m_detailTabs->setTabToolTip(2, tr("The logs of the run opened (of the first run, when comparing)"));
    m_detailTabs->addTab(m_hyperparameters, tr("Hyperparameters"));
    m_detailTabs->setTabToolTip(3, tr("The job.json settings of the runs opened, side by side"));
    m_problemsBanner->setWordWrap(true);
    m_problemsBanner->setTextFormat(Qt::RichText);
    m_problemsBanner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_problemsBanner->setStyleSheet(QStringLiteral("background:#fdecea; color:#611a15; border:1px solid #f5c2c7; padding:6px;"));
    m_problemsBanner->setVisible(false);
    auto* detailArea = new QWidget(this);
    auto* detailLayout = new QVBoxLayout(detailArea);
    detailLayout->setContentsMargins(0, 0, 0, 0);
    detailLayout->addWidget(m_problemsBanner);
    detailLayout->addWidget(m_detailTabs, 1);
    details->addWidget(detailArea);
    details->setStretchFactor(1, 1);

    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(listArea);
    split->addWidget(details);
    split->setStretchFactor(0, kTableShare);
    split->setStretchFactor(1, kChartShare);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(&m_listing, &QFutureWatcher<Listing>::finished, this, &RunsPanel::onListed);
    connect(&m_opening, &QFutureWatcher<QList<OpenedRun>>::finished, this, &RunsPanel::onOpened);
    connect(m_queue, &SlurmQueueStates::updated, this, [this] {
        m_model->setQueueStates(m_queue->states());
        updateButtons();
    });
    connect(m_queue, &SlurmQueueStates::jobEnded, this, &RunsPanel::refresh);   // its files now tell how it ended
    connect(m_folderWatch, &RunsFolderWatch::changed, this, &RunsPanel::refresh);   // a run started or ended elsewhere
    m_actions->setTickedRuns([this] { return m_model->tickedRuns(); });
    updateButtons();
}

RunsPanel::~RunsPanel()
{
    // The workers touch only the run folders, never this panel; still, leave nothing half-written behind.
    m_listing.waitForFinished();
    m_opening.waitForFinished();
}

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
        m_opening.setFuture(QtConcurrent::run([] { return QList<OpenedRun>(); }));
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
        QList<OpenedRun> opened;
        for (const auto& [path, label] : jobs) opened.append(readOpenedRun(path, label, opened.isEmpty()));
        return opened;
    }));
}

void RunsPanel::onOpened()
{
    const QList<OpenedRun> opened = m_opening.result();
    m_chart->clear();
    for (const QString& label : std::as_const(m_openLabels)) m_chart->setRunColour(label, QColor());
    m_openLabels.clear();
    m_openJobs.clear();
    m_openColours.clear();
    for (const OpenedRun& run : opened) {
        m_openLabels << run.label;
        m_openJobs << run.job;
    }
    m_openRuns = m_openingPaths;
    m_model->setTickedRuns(m_openRuns);   // the ticks show what the chart draws
    applyCompareColours();   // before the points: the panels are built once, in the runs' colours
    QList<runs::RunRecord> records;
    for (const OpenedRun& run : opened) {
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
