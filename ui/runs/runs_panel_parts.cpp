// How the Runs tab is put together (runs_panel.h): the constructor and its named parts, the list of runs above
// and the run opened below. What the tab does with runs (listing, opening, comparing, renaming, deleting) is in
// runs_panel.cpp.
#include "ui/runs/runs_panel.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "ui/charts/scalar_chart.h"
#include "ui/charts/system_panel.h"
#include "ui/runs/hyperparameter_table.h"
#include "ui/panes/eval_table.h"
#include "ui/panes/log_panel.h"
#include "ui/runs/run_actions.h"
#include "ui/runs/runs_folder_watch.h"
#include "ui/runs/runs_model.h"
#include "ui/runs/slurm_queue_states.h"

namespace ringmaster::ui {
namespace {

constexpr int kSummaryWidth = 320;
constexpr int kTableShare = 2;    // the table over the chart, by height
constexpr int kChartShare = 3;

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
    QWidget* listArea = buildRunList();
    QWidget* details = buildRunDetails();
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(listArea);
    split->addWidget(details);
    split->setStretchFactor(0, kTableShare);
    split->setStretchFactor(1, kChartShare);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connectBackground();
    updateButtons();
}

// Above: the filter, the table of runs and the buttons and actions on the selected ones.
QWidget* RunsPanel::buildRunList()
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
    return listArea;
}

// Below: the summary of the run opened, and its scalars, evaluations, system use, logs and hyperparameters.
QWidget* RunsPanel::buildRunDetails()
{
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
    return details;
}

// Listing and opening off the GUI thread, Slurm's word on queued runs, and runs started or ended elsewhere.
void RunsPanel::connectBackground()
{
    connect(&m_listing, &QFutureWatcher<Listing>::finished, this, &RunsPanel::onListed);
    connect(&m_opening, &QFutureWatcher<QList<runs::OpenedRun>>::finished, this, &RunsPanel::onOpened);
    connect(m_queue, &SlurmQueueStates::updated, this, [this] {
        m_model->setQueueStates(m_queue->states());
        updateButtons();
    });
    connect(m_queue, &SlurmQueueStates::jobEnded, this, &RunsPanel::refresh);   // its files now tell how it ended
    connect(m_folderWatch, &RunsFolderWatch::changed, this, &RunsPanel::refresh);   // a run started or ended elsewhere
    m_actions->setTickedRuns([this] { return m_model->tickedRuns(); });
}

RunsPanel::~RunsPanel()
{
    // The workers touch only the run folders, never this panel; still, leave nothing half-written behind.
    m_listing.waitForFinished();
    m_opening.waitForFinished();
}

} // namespace ringmaster::ui
