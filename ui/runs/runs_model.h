#pragma once
// The Runs panel's table, without widgets: one row per run directory (core/runs RunRecord), with the
// columns of `ringmaster-runs list` (name, started, status, kind, model, world, steps, final loss, best
// val acc, duration). The name column shows the user's title when the run has one (notes.json). Display
// text is formatted as the CLI formats it; kSortRole gives the raw value (numbers as numbers, times as
// milliseconds) so that RunsFilterProxy sorts 10 after 9. A damaged run's row is tinted and its problems
// are the tooltip. The run that is live now (setActiveRun) shows as "running", in bold; a run Slurm still
// holds (setQueueStates: "queued", "running") shows Slurm's word, with Slurm's state in its tooltip. The name column's
// swatch (DecorationRole) is the colour the run is drawn in when compared (run_colours.h), and its tick
// says whether the run is drawn in the Runs tab's chart (kept by path across setRuns; a user's tick or
// untick is announced by tickToggled, one set in code is not).

#include <QAbstractTableModel>
#include <QHash>
#include <QList>
#include <QSet>
#include <QSortFilterProxyModel>

#include "runs/run_record.h"

namespace ringmaster::ui {

// Slurm's word on a run it still holds (slurm_queue_states.h): "queued" or "running", and the detail
// ("Slurm job 57: PENDING (Resources)", or why Slurm could not be asked).
struct RunQueueState
{
    QString status;   // empty: Slurm could not be asked (the detail says why)
    QString detail;
};

class RunsModel : public QAbstractTableModel
{
    Q_OBJECT

public:
    enum Column { Name, Started, Status, Kind, Model, World, Steps, FinalLoss, BestValAcc, Duration, ColumnCount };
    static constexpr int kSortRole = Qt::UserRole + 1;
    static constexpr int kPathRole = Qt::UserRole + 2;
    static constexpr int kFilterRole = Qt::UserRole + 3;   // name, title, model, status and notes, joined

    explicit RunsModel(QObject* parent = nullptr);

    void setRuns(const QList<runs::RunRecord>& runs);
    const QList<runs::RunRecord>& runs() const { return m_runs; }
    // The row of the run directory PATH (absolute, clean), -1 when not listed.
    int rowOf(const QString& path) const;
    // The run directory being written by the live run ("" when none).
    void setActiveRun(const QString& path);
    const QString& activeRun() const { return m_activeRun; }
    // Slurm's word on the runs it still holds, by run directory (clean, absolute).
    void setQueueStates(const QHash<QString, RunQueueState>& states);
    // Slurm queues or runs PATH now (as last answered), and it is not the live run of this window.
    bool isHeldBySlurm(const QString& path) const;
    // The runs ticked (clean paths), in the order of the rows; setTickedRuns ticks exactly these.
    QStringList tickedRuns() const;
    void setTickedRuns(const QStringList& paths);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;

    // The label a run is shown under (its title, else its directory's name).
    static QString labelOf(const runs::RunRecord& run);

Q_SIGNALS:
    // The user ticked or unticked a run (setData with Qt::CheckStateRole).
    void tickToggled();

private:
    QVariant display(const runs::RunRecord& run, int column) const;
    QVariant sortValue(const runs::RunRecord& run, int column) const;
    bool isActive(const runs::RunRecord& run) const;
    QString queueStatus(const runs::RunRecord& run) const;

    QList<runs::RunRecord> m_runs;
    QString m_activeRun;
    QSet<QString> m_ticked;   // clean paths
    QHash<QString, RunQueueState> m_queue;
};

// Sorts by kSortRole (missing values first when ascending, numbers numerically, text case-insensitively)
// and keeps the rows whose name, title, model, status or notes contain the filter text (any case).
class RunsFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT

public:
    explicit RunsFilterProxy(QObject* parent = nullptr);

protected:
    bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;
};

} // namespace ringmaster::ui
