#include "ui/form/trainer_option_fields.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/form/form_widgets.h"
#include "ui/form/job_options.h"
#include "supervisor/trainer_flags.h"
#include "protocol/trainer_options.h"

namespace ringmaster::ui {
namespace {

using protocol::OptionType;
using protocol::TrainerOption;

// The list entry of a choice whose default is no value at all (its row says what that means).
constexpr int kOwnDefault = 1;
// A number field without an upper bound still needs one.
constexpr double kLargestReal = 1e12;

const TrainerOption& row(const char* key) { return protocol::trainerOption(key); }

// The integer range a spin box can hold of BOUNDS.
std::pair<int, int> integerRange(const protocol::OptionBounds& b)
{
    constexpr double lowest = std::numeric_limits<int>::min();
    constexpr double highest = std::numeric_limits<int>::max();
    const double low = std::isfinite(b.low) ? (b.lowOpen ? b.low + 1 : b.low) : lowest;
    const double high = std::isfinite(b.high) ? (b.highOpen ? b.high - 1 : b.high) : highest;
    return {static_cast<int>(std::max(low, lowest)), static_cast<int>(std::min(high, highest))};
}

QWidget* fieldFor(QWidget* parent, const TrainerOption& option)
{
    QWidget* field = nullptr;
    switch (option.type) {
    case OptionType::Integer: field = optionSpin(parent, option.key); break;
    case OptionType::Boolean: field = new QCheckBox(parent); break;
    case OptionType::Choice: {
        auto* box = optionCombo(parent, option.key);
        if (!*option.defaultValue) { // no value is the option's own default (backend: by device), listed first
            box->insertItem(0, QObject::tr("default"), QVariant(kOwnDefault));
            box->setCurrentIndex(0);
        }
        field = box;
        break;
    }
    case OptionType::Real:
    case OptionType::Text: {
        auto* edit = new QLineEdit(parent);
        edit->setPlaceholderText(option.type == OptionType::Text && !*option.defaultValue ? QObject::tr("default")
                                                                                          : QString());
        field = edit;
        break;
    }
    }
    field->setToolTip(optionTip(option.key));
    return field;
}

} // namespace

QString optionLabel(const char* key) { return QString::fromUtf8(row(key).label); }

QString optionTip(const char* key)
{
    QString tip = QString::fromStdString(protocol::optionHelpText(row(key)));
    // A sentence starts with a capital, unless its first word is a name or a value ("fp16:", "auto:", "L2").
    const QString first = tip.section(QLatin1Char(' '), 0, 0);
    const bool plainWord = std::all_of(first.cbegin(), first.cend(), [](QChar c) { return c.isLetter(); });
    if (plainWord && !first.isEmpty()) tip[0] = tip[0].toUpper();
    return tip;
}

QStringList optionChoices(const char* key)
{
    QStringList choices;
    const TrainerOption& option = row(key);
    for (std::size_t i = 0; i < protocol::optionChoiceCount(option); ++i) {
        choices << QString::fromStdString(protocol::optionChoice(option, i));
    }
    return choices;
}

qint64 optionDefaultInteger(const char* key) { return QString::fromUtf8(row(key).defaultValue).toLongLong(); }
double optionDefaultReal(const char* key) { return QString::fromUtf8(row(key).defaultValue).toDouble(); }
QString optionDefaultText(const char* key) { return QString::fromUtf8(row(key).defaultValue); }

QSpinBox* optionSpin(QWidget* parent, const char* key, std::optional<int> lowest)
{
    const auto [low, high] = integerRange(row(key).bounds);
    return spin(parent, lowest.value_or(low), high, static_cast<int>(optionDefaultInteger(key)), optionTip(key));
}

QDoubleSpinBox* optionDoubleSpin(QWidget* parent, const char* key, int decimals)
{
    const protocol::OptionBounds& b = row(key).bounds;
    const double step = std::pow(10.0, -decimals);
    const double low = std::isfinite(b.low) ? (b.lowOpen ? b.low + step : b.low) : -kLargestReal;
    const double high = std::isfinite(b.high) ? (b.highOpen ? b.high - step : b.high) : kLargestReal;
    return doubleSpin(parent, low, high, optionDefaultReal(key), decimals, optionTip(key));
}

QComboBox* optionCombo(QWidget* parent, const char* key)
{
    auto* box = combo(parent, optionChoices(key), optionTip(key));
    box->setCurrentText(optionDefaultText(key));
    return box;
}

MoreTrainerOptions::MoreTrainerOptions(const QStringList& shownElsewhere, QWidget* parent)
    : QWidget(parent)
    , m_toggle(new QToolButton(this))
    , m_body(new QWidget(this))
{
    m_toggle->setText(tr("More trainer options"));
    m_toggle->setToolTip(tr("Every other option of ringmaster-trainer (its --help lists them), at its default until changed"));
    m_toggle->setCheckable(true);
    m_toggle->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_toggle->setArrowType(Qt::RightArrow);
    m_toggle->setAutoRaise(true);
    auto* form = wrappingForm(m_body);
    QString group;
    for (const TrainerOption& option : protocol::trainerOptions()) {
        if (option.owner != protocol::OptionOwner::User || shownElsewhere.contains(QLatin1String(option.key))) continue;
        QWidget* field = fieldFor(m_body, option);
        if (QString::fromUtf8(option.group) != group) {
            group = QString::fromUtf8(option.group);
            form->addRow(new QLabel(QStringLiteral("<b>%1</b>").arg(group.toHtmlEscaped()), m_body));
        }
        form->addRow(QString::fromUtf8(option.label), field);
        m_fields.append({QString::fromLatin1(option.key), field});
        if (auto* box = qobject_cast<QSpinBox*>(field)) connect(box, &QSpinBox::valueChanged, this, &MoreTrainerOptions::changed);
        if (auto* box = qobject_cast<QCheckBox*>(field)) connect(box, &QCheckBox::toggled, this, &MoreTrainerOptions::changed);
        if (auto* box = qobject_cast<QComboBox*>(field)) connect(box, &QComboBox::currentTextChanged, this, &MoreTrainerOptions::changed);
        if (auto* edit = qobject_cast<QLineEdit*>(field)) connect(edit, &QLineEdit::textChanged, this, &MoreTrainerOptions::changed);
    }
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_toggle, 0, Qt::AlignLeft);
    layout->addWidget(m_body);
    m_body->setVisible(false);
    connect(m_toggle, &QToolButton::toggled, this, &MoreTrainerOptions::setOpen);
}

bool MoreTrainerOptions::isOpen() const { return m_toggle->isChecked(); }

void MoreTrainerOptions::setOpen(bool open)
{
    m_toggle->setChecked(open);
    m_toggle->setArrowType(open ? Qt::DownArrow : Qt::RightArrow);
    m_body->setVisible(open);
}

void MoreTrainerOptions::setJob(const QJsonObject& trainer)
{
    for (const Field& field : m_fields) {
        const QByteArray key = field.key.toLatin1();
        const TrainerOption& option = row(key.constData());
        const QString text = textOption(trainer, key.constData(), QString::fromUtf8(option.defaultValue));
        if (auto* box = qobject_cast<QSpinBox*>(field.widget)) box->setValue(static_cast<int>(integerOption(trainer, key.constData(), optionDefaultInteger(key.constData()))));
        if (auto* box = qobject_cast<QCheckBox*>(field.widget)) {
            box->setChecked(trainer.contains(field.key) ? boolOption(trainer, key.constData())
                                                        : QLatin1String(option.defaultValue) == QLatin1String("true"));
        }
        if (auto* box = qobject_cast<QComboBox*>(field.widget)) {
            if (text.isEmpty() && box->itemData(0) == QVariant(kOwnDefault)) {
                box->setCurrentIndex(0);
            } else {
                if (box->findText(text) < 0) box->addItem(text); // a value of the job file's own, kept (the trainer checks it)
                box->setCurrentText(text);
            }
        }
        if (auto* edit = qobject_cast<QLineEdit*>(field.widget)) edit->setText(text);
    }
}

bool MoreTrainerOptions::owns(const QWidget* widget) const
{
    for (const Field& field : m_fields) {
        if (field.widget == widget) return true;
    }
    return false;
}

QJsonValue MoreTrainerOptions::valueOf(const QWidget* widget) const
{
    for (const Field& field : m_fields) {
        if (field.widget != widget) continue;
        if (const auto* box = qobject_cast<const QSpinBox*>(widget)) return QJsonValue(qint64(box->value()));
        if (const auto* box = qobject_cast<const QCheckBox*>(widget)) return box->isChecked();
        QString text;
        if (const auto* box = qobject_cast<const QComboBox*>(widget)) {
            if (box->currentData() == QVariant(kOwnDefault)) return QJsonValue(QJsonValue::Undefined);
            text = box->currentText();
        }
        if (const auto* edit = qobject_cast<const QLineEdit*>(widget)) text = edit->text().trimmed();
        if (text.isEmpty()) return QJsonValue(QJsonValue::Undefined); // the option's own default
        return supervisor::typedTrainerValue(field.key, text);
    }
    return QJsonValue(QJsonValue::Undefined);
}

} // namespace ringmaster::ui
