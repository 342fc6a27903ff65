#pragma once
// The dialog that lists a run's checkpoints (core/runs checkpoint_list.h: step, epoch, file time and the
// loss metrics.csv recorded at that step), newest selected, to pick one to resume from or to copy out.
// The list is read when the dialog opens (names, file times and one CSV: fast enough for the GUI thread).

#include <QDialog>
#include <QList>

#include "runs/checkpoint_list.h"

class QDialogButtonBox;
class QLabel;
class QTableWidget;

namespace ringmaster::ui {

class CheckpointPicker : public QDialog
{
    Q_OBJECT

public:
    enum class Purpose { Resume, Copy };
    CheckpointPicker(const QString& runDir, Purpose purpose, QWidget* parent = nullptr);

    // Opens the dialog; the chosen checkpoint's path, or "" when cancelled or the run has none (said in a box).
    static QString pick(QWidget* parent, const QString& runDir, Purpose purpose);

    const QList<runs::CheckpointInfo>& checkpoints() const { return m_checkpoints; }
    QTableWidget* table() const { return m_table; }
    // The selected row's checkpoint ("" when none); selectStep selects the checkpoint of that step.
    QString selectedCheckpoint() const;
    bool selectStep(qint64 step);

private:
    QList<runs::CheckpointInfo> m_checkpoints;
    QTableWidget* m_table;
    QDialogButtonBox* m_buttons;
};

} // namespace ringmaster::ui
