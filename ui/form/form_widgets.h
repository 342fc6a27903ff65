#pragma once
// Small builders the job form's panels share (JobForm, SlurmFields): spin boxes and combo boxes that come
// with their range, value and tooltip, a field with a button beside it, a form layout whose long rows wrap
// under their label instead of widening the panel, the red outline of an invalid field, and the switch that greys out a field that does not
// apply where the job runs (its tooltip then says why, and says what it said before once it applies again).

#include <QString>
#include <QStringList>

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QSpinBox;
class QWidget;

namespace ringmaster::ui {

QSpinBox* spin(QWidget* parent, int min, int max, int value, const QString& tip);
QDoubleSpinBox* doubleSpin(QWidget* parent, double min, double max, double value, int decimals, const QString& tip);
QComboBox* combo(QWidget* parent, const QStringList& items, const QString& tip);
// A and B side by side, A taking the width.
QWidget* fieldRow(QWidget* parent, QWidget* a, QWidget* b);
// A form on BOX whose long rows put the field under its label.
QFormLayout* wrappingForm(QWidget* box);
// Outlines an invalid field in red (false: back to normal).
void mark(QWidget* widget, bool bad);
// Enables WIDGET when `applies`; otherwise disables it and makes `why` its tooltip (its own tooltip comes
// back when it applies again).
void setApplies(QWidget* widget, bool applies, const QString& why);

} // namespace ringmaster::ui
