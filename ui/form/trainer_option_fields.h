#pragma once
// The job form's trainer fields as the option table (core/protocol/trainer_options.h) declares them: each field's
// label, tooltip (the option's help with its bounds and default), range, choices and default come from its row,
// so the form, ringmaster-trainer --help and the trainer's own checks cannot disagree. The form's own fields (the
// model box, the data picker, the spin boxes of the Training group) are made by the builders here; every other
// option the user may set gets a row in MoreTrainerOptions, a box under the form's groups that opens on demand,
// laid out from the table alone: a spin box for a whole number, a text field for a number or a text, a check box
// for a boolean, a list for a choice.

#include <QJsonObject>
#include <QJsonValue>
#include <QList>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <optional>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QSpinBox;
class QToolButton;

namespace ringmaster::ui {

// The row's label, tooltip, choices (a Text option's suggestions) and default value.
QString optionLabel(const char* key);
QString optionTip(const char* key);
QStringList optionChoices(const char* key);
qint64 optionDefaultInteger(const char* key);
double optionDefaultReal(const char* key);
QString optionDefaultText(const char* key);

// Fields at the row's range, default and tooltip. A spin box's range is the row's bounds within what it holds;
// LOWEST, when given, replaces its lowest value (so that a loaded job's bad value shows as the form's problem
// instead of being clamped away).
QSpinBox* optionSpin(QWidget* parent, const char* key, std::optional<int> lowest = std::nullopt);
QDoubleSpinBox* optionDoubleSpin(QWidget* parent, const char* key, int decimals);
QComboBox* optionCombo(QWidget* parent, const char* key);

// The table's options that no field of the form shows: one row each, hidden until the user opens the box.
class MoreTrainerOptions : public QWidget
{
    Q_OBJECT
public:
    // SHOWN_ELSEWHERE: the keys the form has fields of its own for.
    MoreTrainerOptions(const QStringList& shownElsewhere, QWidget* parent = nullptr);

    struct Field
    {
        QString key;
        QWidget* widget;
    };
    const QList<Field>& fields() const { return m_fields; }
    // Each field at the job's value, or at the option's default when the job has none.
    void setJob(const QJsonObject& trainer);
    bool owns(const QWidget* widget) const;
    // The field's value as the job file holds it (typed by its row), or undefined: left at "" (the option's own
    // default) or a widget that is not one of these fields.
    QJsonValue valueOf(const QWidget* widget) const;
    bool isOpen() const;
    void setOpen(bool open);

Q_SIGNALS:
    void changed();

private:
    QToolButton* m_toggle;
    QWidget* m_body;
    QList<Field> m_fields;
};

} // namespace ringmaster::ui
