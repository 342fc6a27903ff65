#pragma once
// The Runs tab's "Hyperparameters" view of compared runs: one column per run (headed by its label, in its
// colour), one row per job.json key ("trainer.lr", "launch.nproc", ...; core/runs job_diff.h), and an
// "Only differences" box, ticked by default, that hides the rows where every run agrees. A run without a
// readable job.json shows "—" in every row (the reason in the cell's tooltip). The rows are recomputed
// from what setRuns was given; nothing is read from disk here.

#include <QColor>
#include <QList>
#include <QStringList>
#include <QWidget>

#include "runs/job_diff.h"

class QCheckBox;
class QLabel;
class QTableWidget;

namespace ringmaster::ui {

class HyperparameterTable : public QWidget
{
    Q_OBJECT

public:
    static inline const QString kUnknown = QStringLiteral("—");

    explicit HyperparameterTable(QWidget* parent = nullptr);

    // The compared runs: their labels, colours (may be shorter: the rest uncoloured) and jobs, in order.
    void setRuns(const QStringList& labels, const QList<QColor>& colours, const QList<runs::RunJob>& jobs);
    void setOnlyDifferences(bool on);
    bool onlyDifferences() const;

    // The keys shown, top to bottom, and the text of one cell (KEY's row, the run at COLUMN).
    QStringList keys() const { return m_keys; }
    QString cellText(const QString& key, int column) const;
    QTableWidget* table() const { return m_table; }
    QCheckBox* onlyDifferencesBox() const { return m_onlyDifferences; }

private:
    void rebuild();

    QCheckBox* m_onlyDifferences;
    QLabel* m_note;
    QTableWidget* m_table;
    QStringList m_labels;
    QList<QColor> m_colours;
    QList<runs::RunJob> m_jobs;
    QStringList m_keys;
};

} // namespace ringmaster::ui
