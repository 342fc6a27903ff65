#include "ui/form/form_widgets.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSpinBox>
#include <QVariant>

namespace ringmaster::ui {
namespace {

// The tooltip a field had before setApplies replaced it.
constexpr char kOwnToolTip[] = "ringmasterOwnToolTip";

} // namespace

QSpinBox* spin(QWidget* parent, int min, int max, int value, const QString& tip)
{
    auto* box = new QSpinBox(parent);
    box->setRange(min, max);
    box->setValue(value);
    box->setToolTip(tip);
    return box;
}

QDoubleSpinBox* doubleSpin(QWidget* parent, double min, double max, double value, int decimals, const QString& tip)
{
    auto* box = new QDoubleSpinBox(parent);
    box->setRange(min, max);
    box->setDecimals(decimals);
    box->setValue(value);
    box->setToolTip(tip);
    return box;
}

QComboBox* combo(QWidget* parent, const QStringList& items, const QString& tip)
{
    auto* box = new QComboBox(parent);
    box->addItems(items);
    box->setToolTip(tip);
    return box;
}

QWidget* fieldRow(QWidget* parent, QWidget* a, QWidget* b)
{
    auto* box = new QWidget(parent);
    auto* layout = new QHBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(a, 1);
    layout->addWidget(b);
    return box;
}

QFormLayout* wrappingForm(QWidget* box)
{
    auto* layout = new QFormLayout(box);
    layout->setRowWrapPolicy(QFormLayout::WrapLongRows);
    layout->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    return layout;
}

void mark(QWidget* widget, bool bad)
{
    widget->setStyleSheet(bad ? QStringLiteral("border: 2px solid #d62728; border-radius: 3px;") : QString());
}

void setApplies(QWidget* widget, bool applies, const QString& why)
{
    const QVariant own = widget->property(kOwnToolTip);
    if (!own.isValid()) widget->setProperty(kOwnToolTip, widget->toolTip());
    widget->setEnabled(applies);
    widget->setToolTip(applies ? widget->property(kOwnToolTip).toString() : why);
}

} // namespace ringmaster::ui
