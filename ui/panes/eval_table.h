#pragma once
// The evaluation table: one row per validation pass of a built-in-trainer run (epoch, step, validation
// loss and accuracy, and the wall time of the last training step at or before it, in seconds since the
// run's start as metrics.csv and the chart's wall-time axis count; blank when no training step is known),
// with a line above it saying how many there are and the best accuracy, or what could not be read. The
// main window fills it live from the supervisor's eval and step messages (as the Training chart); the Runs
// tab fills it from a past run's eval.csv and metrics.csv (core/runs/run_evals.h, any thread), so an
// opened run shows the same table as the live one. Evaluations are few (one per epoch): a QTableWidget.

#include <QList>
#include <QStringList>
#include <QWidget>

#include <optional>

#include "runs/run_evals.h"
#include "supervisor/run_types.h"

class QLabel;
class QTableWidget;

namespace ringmaster::ui {

using runs::EvalReading;
using runs::EvalRow;

class EvalTable : public QWidget
{
    Q_OBJECT

public:
    enum Column { Epoch, Step, ValLoss, ValAccuracy, WallTime, ColumnCount };

    explicit EvalTable(QWidget* parent = nullptr);

    // Live: remembers the training step's wall time, for the evaluation that follows it.
    void noteStep(const supervisor::StepMetric& metric);
    // Live: one evaluation, as the supervisor reports it.
    void append(const supervisor::EvalMetric& metric);
    // A restart from a checkpoint: the evaluations after its step are gone (as the chart's points).
    void truncateAfter(qint64 step);
    // Replaces the rows (a past run, or a resumed run's history); PROBLEMS are shown above the table.
    void setReading(const EvalReading& reading);
    void clear();

    const QList<EvalRow>& rows() const { return m_rows; }
    int rowCount() const { return static_cast<int>(m_rows.size()); }
    // The text shown in a cell, and the line above the table.
    QString cellText(int row, int column) const;
    QString headline() const;
    QTableWidget* table() const { return m_table; }

private:
    void addRow(const EvalRow& row);
    void showHeadline();

    QLabel* m_headline;
    QTableWidget* m_table;
    QList<EvalRow> m_rows;
    QStringList m_problems;
    qint64 m_lastStep = -1;
    double m_lastWallTime = 0.0;
};

} // namespace ringmaster::ui
