#include "ui/form/slurm_fields.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStyle>
#include <QtConcurrent>

#include "ui/form/form_widgets.h"
#include "supervisor/slurm/slurm_preflight.h"

namespace ringmaster::ui {
namespace {

const char* const kNoteStyle = "color: #455a64;";
const char* const kErrorStyle = "color: #b00020;";
constexpr int kComboMinimumCharacters = 12;

bool toolFound(const QString& program)
{
    if (program.contains(QLatin1Char('/'))) return QFileInfo(program).isExecutable();
    return !QStandardPaths::findExecutable(program).isEmpty();
}

// sinfo's answer, or one line saying why there is none and what to do (on a worker thread: sinfo blocks).
supervisor::SlurmPartitions listPartitions(const supervisor::SlurmCommands& commands)
{
    supervisor::SlurmPartitions listed;
    if (!toolFound(commands.sinfo)) {
        listed.error = QObject::tr("%1 not found: a Slurm job needs Slurm's client tools on PATH (Debian: apt install "
                                   "slurm-client), or Ringmaster run on the cluster's login node.").arg(commands.sinfo);
        return listed;
    }
    listed = supervisor::SlurmClient(commands).partitions();
    if (!listed.error.isEmpty()) {
        listed.error = QObject::tr("Slurm's partitions could not be listed (%1): check that Slurm's controller runs and "
                                   "answers this machine (scontrol ping), then Refresh.").arg(listed.error);
    } else if (listed.partitions.isEmpty()) {
        listed.error = QObject::tr("Slurm lists no partition (sinfo printed none): ask the cluster's administrators, then Refresh.");
    }
    return listed;
}

QString describe(const supervisor::SlurmPartition& p)
{
    QString gpus = p.gpusPerNode > 0 ? QObject::tr("%n GPU(s)/node", nullptr, p.gpusPerNode) : QObject::tr("no GPUs");
    if (p.gpusPerNode > 0 && p.gpusFree >= 0) gpus += QObject::tr(" (%n free)", nullptr, p.gpusFree);
    return QObject::tr("%1%2 · %3/%4 nodes idle · %5 · limit %6%7")
        .arg(p.name, p.isDefault ? QObject::tr(" (default)") : QString())
        .arg(p.nodesIdle).arg(p.nodesTotal)
        .arg(gpus, p.timeLimit, p.available ? QString() : QObject::tr(" · not up"));
}

} // namespace

SlurmFields::SlurmFields(QWidget* parent)
    : QGroupBox(tr("Slurm cluster"), parent)
{
    m_partition = new QComboBox(this);
    m_partition->setToolTip(tr("The partition (queue) the job is submitted to, as sinfo lists it: idle/total nodes, GPUs per "
                               "node and how many of them are free on idle or partly used nodes, and time limit. The cluster's default partition is preselected"));
    m_partition->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);   // never wider than the panel
    m_partition->setMinimumContentsLength(kComboMinimumCharacters);
    m_refresh = new QPushButton(tr("Refresh"), this);
    m_refresh->setToolTip(tr("Ask Slurm (sinfo) for its partitions again"));
    m_partitionNote = new QLabel(this);
    m_partitionNote->setWordWrap(true);
    m_partitionNote->setTextFormat(Qt::PlainText);
    m_nodes = spin(this, 1, supervisor::kMaxSlurmNodes, 1, tr("Nodes to ask for (sbatch --nodes)"));
    m_tasks = spin(this, 0, supervisor::kMaxSlurmTasksPerNode, 0,
                   tr("Ranks on each node (sbatch --ntasks-per-node). auto: one per GPU on a GPU job, else the job's CPU ranks"));
    m_tasks->setSpecialValueText(tr("auto"));
    m_gpus = spin(this, 0, supervisor::kMaxSlurmGpusPerNode, 0,
                  tr("GPUs to ask for on each node (sbatch --gpus-per-node); the job runs on GPUs exactly when this is above 0, "
                     "one task per GPU. This machine's GPU selection is not used under Slurm"));
    m_gpus->setSpecialValueText(tr("none (CPU)"));
    m_ranks = new QLabel(this);
    m_ranks->setWordWrap(true);
    m_ranks->setToolTip(tr("The job's ranks: nodes × tasks per node"));
    m_time = new QLineEdit(this);
    m_time->setPlaceholderText(tr("the partition's default, e.g. 0-02:00:00"));
    m_time->setToolTip(tr("Time limit (sbatch --time): MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, "
                          "DAYS-HOURS:MINUTES or DAYS-HOURS:MINUTES:SECONDS, or UNLIMITED; empty: the partition's default"));
    m_account = new QLineEdit(this);
    m_account->setPlaceholderText(tr("your default account"));
    m_account->setToolTip(tr("The account the job is charged to (sbatch --account); empty: your default"));
    m_extra = new QLineEdit(this);
    m_extra->setPlaceholderText(tr("e.g. --mem=64G --qos=high"));
    m_extra->setToolTip(tr("Further sbatch options, each one long option (--name=value), separated by spaces. The options "
                           "above, the job's name, output and working directory are Ringmaster's"));

    auto* form = wrappingForm(this);
    form->addRow(tr("Partition"), fieldRow(this, m_partition, m_refresh));
    form->addRow(QString(), m_partitionNote);
    form->addRow(tr("Nodes"), m_nodes);
    form->addRow(tr("Tasks per node"), m_tasks);
    form->addRow(tr("GPUs per node"), m_gpus);
    form->addRow(tr("Ranks"), m_ranks);
    form->addRow(tr("Time limit"), m_time);
    form->addRow(tr("Account"), m_account);
    form->addRow(tr("Extra options"), m_extra);

    for (QSpinBox* box : {m_nodes, m_tasks, m_gpus}) connect(box, &QSpinBox::valueChanged, this, &SlurmFields::revalidate);
    for (QLineEdit* edit : {m_time, m_account, m_extra}) connect(edit, &QLineEdit::textChanged, this, &SlurmFields::revalidate);
    connect(m_partition, &QComboBox::currentIndexChanged, this, [this] {
        if (!m_filling) m_partitionEdited = true;
        showNote();
        revalidate();
    });
    connect(m_refresh, &QPushButton::clicked, this, &SlurmFields::refreshPartitions);
    connect(&m_listing, &QFutureWatcher<supervisor::SlurmPartitions>::finished, this, &SlurmFields::onListed);
    m_partitionNote->setVisible(false);
    setJob(supervisor::JobSpec{});
}

void SlurmFields::setJob(const supervisor::JobSpec& job)
{
    m_loaded = job.slurm;
    m_nproc = job.nproc;
    m_nodes->setValue(m_loaded.nodes);
    m_tasks->setValue(m_loaded.ntasksPerNode);
    m_gpus->setValue(m_loaded.gpusPerNode);
    m_time->setText(m_loaded.time);
    m_account->setText(m_loaded.account);
    m_extra->setText(m_loaded.extraArgs.join(QLatin1Char(' ')));
    m_partitionEdited = false;
    fillPartitions();
    revalidate();
}

supervisor::SlurmRequest SlurmFields::request() const
{
    supervisor::SlurmRequest request = m_loaded;   // its job id, when the job was submitted once
    request.enabled = true;
    request.nodes = m_nodes->value();
    request.ntasksPerNode = m_tasks->value();
    request.gpusPerNode = m_gpus->value();
    if (m_partitionEdited) request.partition = shownPartition();   // else as loaded (empty: the cluster's default)
    request.time = m_time->text().trimmed();
    request.account = m_account->text().trimmed();
    request.extraArgs = extraArguments();
    return request;
}

void SlurmFields::apply(supervisor::JobSpec* job) const
{
    job->slurm = request();
    job->device = m_gpus->value() > 0 ? QStringLiteral("cuda") : QStringLiteral("cpu");
    job->gpus.clear();   // the allocation's GPUs, not this machine's
    job->nproc = m_nproc;
}

int SlurmFields::worldSize() const
{
    const int tasks = m_tasks->value() > 0 ? m_tasks->value() : m_gpus->value() > 0 ? m_gpus->value() : m_nproc;
    return m_nodes->value() * tasks;
}

void SlurmFields::setActive(bool active)
{
    m_active = active;
    if (m_active && !m_listedOnce) refreshPartitions();
}

void SlurmFields::refreshPartitions()
{
    m_listedOnce = true;
    if (m_listing.isRunning()) {
        m_listPending = true;   // the answer on its way may be older than what was asked for
        return;
    }
    m_listing.setFuture(QtConcurrent::run([commands = m_commands] { return listPartitions(commands); }));
    showNote();
    revalidate();   // the form is "checking" until the list is in
}

void SlurmFields::onListed()
{
    m_listed = m_listing.result();
    m_answered = true;
    fillPartitions();
    showNote();
    if (m_listPending) {
        m_listPending = false;
        refreshPartitions();
    }
    revalidate();
    Q_EMIT partitionsListed();
}

void SlurmFields::fillPartitions()
{
    m_filling = true;
    const QString keep = m_partitionEdited ? shownPartition() : m_loaded.partition;
    m_partition->clear();
    int select = -1;
    for (const supervisor::SlurmPartition& p : std::as_const(m_listed.partitions)) {
        m_partition->addItem(describe(p), p.name);
        m_partition->setItemData(m_partition->count() - 1, p.gres.isEmpty() ? tr("no generic resources") : p.gres, Qt::ToolTipRole);
        if (keep.isEmpty() ? p.isDefault : p.name == keep) select = m_partition->count() - 1;
    }
    if (select < 0 && !keep.isEmpty()) {   // the job's own partition, not (or not yet) listed: kept as it is
        m_partition->addItem(m_answered ? tr("%1 (not listed by sinfo)").arg(keep) : keep, keep);
        select = m_partition->count() - 1;
    }
    if (m_partition->count() == 0) m_partition->addItem(tr("the cluster's default"), QString());
    m_partition->setCurrentIndex(std::max(select, 0));
    // The list opens as wide as its longest entry, even where the panel keeps the box itself narrow.
    m_partition->view()->setMinimumWidth(m_partition->view()->sizeHintForColumn(0) + 2 * m_partition->view()->frameWidth() +
                                         m_partition->style()->pixelMetric(QStyle::PM_ScrollBarExtent));
    m_filling = false;
}

void SlurmFields::showNote()
{
    QString text;
    const char* style = kNoteStyle;
    if (m_listing.isRunning()) {
        text = tr("asking Slurm for its partitions (sinfo)…");
    } else if (!m_listed.error.isEmpty()) {
        text = m_listed.error;
        style = kErrorStyle;
    } else {
        for (const supervisor::SlurmPartition& p : std::as_const(m_listed.partitions)) {
            if (p.name == shownPartition()) text = describe(p) + (p.gres.isEmpty() ? QString() : QStringLiteral(" · gres ") + p.gres);
        }
    }
    m_partitionNote->setText(text);
    m_partitionNote->setStyleSheet(QLatin1String(style));
    m_partitionNote->setVisible(!text.isEmpty());
}

QString SlurmFields::shownPartition() const
{
    return m_partition->currentData().toString();
}

QStringList SlurmFields::extraArguments() const
{
    return m_extra->text().split(QLatin1Char(' '), Qt::SkipEmptyParts);
}

QString SlurmFields::timeProblem() const
{
    const QString time = m_time->text().trimmed();
    if (time.isEmpty() || supervisor::slurmTimeSeconds(time) != supervisor::kSlurmTimeInvalid) return {};
    return tr("Time limit \"%1\" is not a Slurm time: use minutes (90), H:MM:SS (1:30:00) or D-HH:MM:SS (0-02:00:00), "
              "or leave it empty for the partition's default.").arg(time);
}

QString SlurmFields::extraProblem() const
{
    // The job file's own rules for "extra_args" (one long option each, none that Ringmaster sets itself).
    try {
        supervisor::SlurmRequest::fromJson(QJsonObject{{QStringLiteral("extra_args"), QJsonArray::fromStringList(extraArguments())}},
                                           tr("Extra options"));
    } catch (const supervisor::JobError& e) {
        return e.message();
    }
    return {};
}

QStringList SlurmFields::problems() const
{
    QStringList problems;
    if (m_answered && !m_listed.error.isEmpty()) problems << m_listed.error;
    if (const QString problem = timeProblem(); !problem.isEmpty()) problems << problem;
    if (const QString problem = extraProblem(); !problem.isEmpty()) problems << problem;
    const int tasks = m_tasks->value(), gpus = m_gpus->value();
    if (gpus > 0 && tasks > 0 && tasks != gpus) {
        problems << tr("Tasks per node (%1) must be auto or equal GPUs per node (%2): a GPU job runs one task per GPU.").arg(tasks).arg(gpus);
    }
    if (worldSize() > supervisor::kMaxJobRanks) {
        problems << tr("%1 ranks is more than %2: ask for fewer nodes or tasks per node.").arg(worldSize()).arg(supervisor::kMaxJobRanks);
    }
    if (m_answered && m_listed.error.isEmpty()) {
        if (const QString misfit = supervisor::checkSlurmRequestFits(request(), m_listed); !misfit.isEmpty()) {
            problems << tr("Slurm: %1.").arg(misfit);
        }
    }
    return problems;
}

void SlurmFields::revalidate()
{
    mark(m_time, !timeProblem().isEmpty());
    mark(m_extra, !extraProblem().isEmpty());
    const int tasks = m_tasks->value() > 0 ? m_tasks->value() : worldSize() / m_nodes->value();
    QString text = tr("%n node(s)", nullptr, m_nodes->value()) + tr(" × %n task(s)", nullptr, tasks) +
                   tr(" = %n rank(s)", nullptr, worldSize());
    if (m_tasks->value() == 0) {
        text += m_gpus->value() > 0 ? tr(" (auto: one task per GPU)") : tr(" (auto: the job's %n CPU rank(s))", nullptr, m_nproc);
    }
    m_ranks->setText(text);
    Q_EMIT changed();
}

} // namespace ringmaster::ui
