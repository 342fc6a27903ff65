#include "ui/runs/runs_model.h"

#include <QColor>
#include <QDir>
#include <QFont>

#include <cmath>

#include "ui/runs/run_colours.h"

namespace ringmaster::ui {
namespace {

constexpr const char* kMissing = "-";
constexpr int kLossDigits = 6;       // as `ringmaster-runs list` shows them
constexpr int kAccuracyDecimals = 4;
constexpr const char* kStartedFormat = "yyyy-MM-dd HH:mm:ss";
constexpr const char* kRunningStatus = "running";
const QColor kDamagedTint(255, 243, 205);   // a pale amber: readable, not alarming

QString orMissing(const QString& text) { return text.isEmpty() ? QString::fromLatin1(kMissing) : text; }

QString formatDuration(double seconds)
{
    const auto total = static_cast<qint64>(std::llround(seconds));
    return QStringLiteral("%1:%2:%3").arg(total / 3600).arg(total / 60 % 60, 2, 10, QLatin1Char('0')).arg(total % 60, 2, 10, QLatin1Char('0'));
}

template <typename T>
QVariant numberOrNothing(const std::optional<T>& value)
{
    return value ? QVariant(static_cast<double>(*value)) : QVariant();
}

} // namespace

RunsModel::RunsModel(QObject* parent) : QAbstractTableModel(parent) {}

void RunsModel::setRuns(const QList<runs::RunRecord>& runs)
{
    beginResetModel();
    m_runs = runs;
    endResetModel();
}

int RunsModel::rowOf(const QString& path) const
{
    const QString clean = QDir::cleanPath(path);
    for (int row = 0; row < m_runs.size(); ++row) {
        if (QDir::cleanPath(m_runs[row].path) == clean) return row;
    }
    return -1;
}

void RunsModel::setActiveRun(const QString& path)
{
    const QString clean = path.isEmpty() ? QString() : QDir::cleanPath(QDir(path).absolutePath());
    if (clean == m_activeRun) return;
    m_activeRun = clean;
    if (!m_runs.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(static_cast<int>(m_runs.size()) - 1, ColumnCount - 1));
}

bool RunsModel::isActive(const runs::RunRecord& run) const
{
    return !m_activeRun.isEmpty() && QDir::cleanPath(run.path) == m_activeRun;
}

void RunsModel::setQueueStates(const QHash<QString, RunQueueState>& states)
{
    m_queue = states;
    if (!m_runs.isEmpty()) Q_EMIT dataChanged(index(0, 0), index(static_cast<int>(m_runs.size()) - 1, ColumnCount - 1));
}

QString RunsModel::queueStatus(const runs::RunRecord& run) const
{
    return m_queue.value(QDir::cleanPath(run.path)).status;
}

bool RunsModel::isHeldBySlurm(const QString& path) const
{
    const int row = rowOf(path);
    return row >= 0 && !isActive(m_runs[row]) && !queueStatus(m_runs[row]).isEmpty();
}

int RunsModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : static_cast<int>(m_runs.size()); }

int RunsModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QString RunsModel::labelOf(const runs::RunRecord& run) { return run.title.isEmpty() ? run.name : run.title; }

QVariant RunsModel::display(const runs::RunRecord& run, int column) const
{
    switch (column) {
    case Name: return labelOf(run);
    case Started: return orMissing(run.started.isValid() ? run.started.toString(QString::fromLatin1(kStartedFormat)) : QString());
    case Status: {
        if (isActive(run)) return QString::fromLatin1(kRunningStatus);
        const QString queued = queueStatus(run);
        return queued.isEmpty() ? run.status : queued;
    }
    case Kind: return run.kind;
    case Model: return orMissing(run.model);
    case World: return orMissing(run.worldSize ? QString::number(*run.worldSize) : QString());
    case Steps: return orMissing(run.steps ? QString::number(*run.steps) : QString());
    case FinalLoss: return orMissing(run.finalLoss ? QString::number(*run.finalLoss, 'g', kLossDigits) : QString());
    case BestValAcc: return orMissing(run.bestValAccuracy ? QString::number(*run.bestValAccuracy, 'f', kAccuracyDecimals) : QString());
    case Duration: return orMissing(run.durationSeconds ? formatDuration(*run.durationSeconds) : QString());
    default: return {};
    }
}

QVariant RunsModel::sortValue(const runs::RunRecord& run, int column) const
{
    switch (column) {
    case Started: return run.started.isValid() ? QVariant(static_cast<double>(run.started.toMSecsSinceEpoch())) : QVariant();
    case World: return numberOrNothing(run.worldSize);
    case Steps: return numberOrNothing(run.steps);
    case FinalLoss: return numberOrNothing(run.finalLoss);
    case BestValAcc: return numberOrNothing(run.bestValAccuracy);
    case Duration: return numberOrNothing(run.durationSeconds);
    default: return display(run, column);
    }
}

QVariant RunsModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= m_runs.size()) return {};
    const runs::RunRecord& run = m_runs[index.row()];
    switch (role) {
    case Qt::DisplayRole: return display(run, index.column());
    case kSortRole: return sortValue(run, index.column());
    case kPathRole: return run.path;
    case kFilterRole: return QStringList{run.name, run.title, run.model, display(run, Status).toString(), run.notes}.join(QLatin1Char('\n'));
    case Qt::CheckStateRole:
        return index.column() == Name ? QVariant(m_ticked.contains(QDir::cleanPath(run.path)) ? Qt::Checked : Qt::Unchecked) : QVariant();
    case Qt::DecorationRole:
        return index.column() == Name ? QVariant(runColour(run)) : QVariant();
    case Qt::TextAlignmentRole:
        return static_cast<int>(index.column() >= World ? Qt::AlignRight | Qt::AlignVCenter : Qt::AlignLeft | Qt::AlignVCenter);
    case Qt::BackgroundRole:
        // A run still being written (here, or by Slurm) lacks its summary for now: not damaged.
        return run.problems.isEmpty() || isActive(run) || !queueStatus(run).isEmpty() ? QVariant() : QVariant(kDamagedTint);
    case Qt::FontRole: {
        if (!isActive(run)) return {};
        QFont bold;
        bold.setBold(true);
        return bold;
    }
    case Qt::ToolTipRole: {
        QString tip = run.path;
        if (!run.title.isEmpty()) tip = run.title + QLatin1Char('\n') + tip;
        if (!run.notes.isEmpty()) tip += QStringLiteral("\n\n") + run.notes;
        const QString detail = m_queue.value(QDir::cleanPath(run.path)).detail;
        if (isActive(run)) return QString(tip + tr("\n\nThis run is running now."));
        if (!detail.isEmpty()) tip += QStringLiteral("\n\n") + detail;
        if (!run.problems.isEmpty() && queueStatus(run).isEmpty()) tip += tr("\n\nProblems:\n• ") + run.problems.join(QStringLiteral("\n• "));
        return tip;
    }
    default: return {};
    }
}

QStringList RunsModel::tickedRuns() const
{
    QStringList paths;
    for (const runs::RunRecord& run : m_runs) {
        if (m_ticked.contains(QDir::cleanPath(run.path))) paths << QDir::cleanPath(run.path);
    }
    return paths;
}

void RunsModel::setTickedRuns(const QStringList& paths)
{
    m_ticked.clear();
    for (const QString& path : paths) m_ticked.insert(QDir::cleanPath(path));
    if (!m_runs.isEmpty()) Q_EMIT dataChanged(index(0, Name), index(static_cast<int>(m_runs.size()) - 1, Name), {Qt::CheckStateRole});
}

bool RunsModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (role != Qt::CheckStateRole || !index.isValid() || index.column() != Name || index.row() >= m_runs.size()) return false;
    const QString path = QDir::cleanPath(m_runs[index.row()].path);
    if (value.value<Qt::CheckState>() == Qt::Checked) m_ticked.insert(path);
    else m_ticked.remove(path);
    Q_EMIT dataChanged(index, index, {Qt::CheckStateRole});
    Q_EMIT tickToggled();
    return true;
}

Qt::ItemFlags RunsModel::flags(const QModelIndex& index) const
{
    Qt::ItemFlags flags = QAbstractTableModel::flags(index);
    if (index.isValid() && index.column() == Name) flags |= Qt::ItemIsUserCheckable;
    return flags;
}

QVariant RunsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return QAbstractTableModel::headerData(section, orientation, role);
    switch (section) {
    case Name: return tr("Name");
    case Started: return tr("Started");
    case Status: return tr("Status");
    case Kind: return tr("Kind");
    case Model: return tr("Model");
    case World: return tr("World");
    case Steps: return tr("Steps");
    case FinalLoss: return tr("Final loss");
    case BestValAcc: return tr("Best val acc");
    case Duration: return tr("Duration");
    default: return {};
    }
}

RunsFilterProxy::RunsFilterProxy(QObject* parent) : QSortFilterProxyModel(parent)
{
    setSortRole(RunsModel::kSortRole);
    setFilterRole(RunsModel::kFilterRole);
    setFilterCaseSensitivity(Qt::CaseInsensitive);
    setFilterKeyColumn(RunsModel::Name);
}

bool RunsFilterProxy::lessThan(const QModelIndex& left, const QModelIndex& right) const
{
    const QVariant a = left.data(RunsModel::kSortRole);
    const QVariant b = right.data(RunsModel::kSortRole);
    if (!a.isValid() || !b.isValid()) return !a.isValid() && b.isValid();
    if (a.typeId() == QMetaType::Double && b.typeId() == QMetaType::Double) return a.toDouble() < b.toDouble();
    return QString::compare(a.toString(), b.toString(), Qt::CaseInsensitive) < 0;
}

} // namespace ringmaster::ui
