// The job form follows the trainer's option table (core/protocol/trainer_options.h): every option a user sets has a
// field in the form, under the table's label, with the table's help as its tooltip and the table's default as its
// value; the options without a field of their own are laid out in "More trainer options" from the table alone, and
// what the user changes there reaches the job typed as a job file holds it (a number, a boolean), while what the
// user leaves alone stays out of the job (the trainer's default applies).
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTest>

#include "protocol/trainer_options.h"
#include "supervisor/job_spec.h"
#include "ui/form/job_form.h"
#include "ui/form/trainer_option_fields.h"
#include "ui_test_support.h"

using ringmaster::protocol::OptionOwner;
using ringmaster::protocol::OptionType;
using ringmaster::protocol::TrainerOption;
using ringmaster::ui::JobForm;
using ringmaster::ui::MoreTrainerOptions;

namespace {

// The label of the form row WIDGET (or a widget holding it) sits in.
QString rowLabelOf(const JobForm& form, QWidget* widget)
{
    const QList<QFormLayout*> layouts = form.findChildren<QFormLayout*>();
    for (QWidget* w = widget; w && w != &form; w = w->parentWidget()) {
        for (QFormLayout* layout : layouts) {
            if (auto* label = qobject_cast<QLabel*>(layout->labelForField(w))) return label->text();
        }
    }
    return {};
}

// What WIDGET shows, as the text of a flag.
QString shownText(const QWidget* widget)
{
    if (const auto* box = qobject_cast<const QSpinBox*>(widget)) return QString::number(box->value());
    if (const auto* box = qobject_cast<const QDoubleSpinBox*>(widget)) return QString::number(box->value());
    if (const auto* box = qobject_cast<const QCheckBox*>(widget)) return box->isChecked() ? QStringLiteral("true") : QStringLiteral("false");
    if (const auto* box = qobject_cast<const QComboBox*>(widget)) return box->currentText();
    if (const auto* edit = qobject_cast<const QLineEdit*>(widget)) return edit->text();
    return QStringLiteral("<%1>").arg(QString::fromLatin1(widget->metaObject()->className()));
}

} // namespace

class TestTrainerOptionFields : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyOptionHasAFieldUnderItsLabel()
    {
        JobForm form;
        int fields = 0;
        for (const TrainerOption& option : ringmaster::protocol::trainerOptions()) {
            const QString key = QString::fromLatin1(option.key);
            QWidget* field = form.fieldOfTrainerOption(key);
            if (option.owner == OptionOwner::Launcher) {
                // --out, --device and --resume: the output folder, the GPU panel and the Runs tab set them.
                QVERIFY2(!field, qPrintable(key));
                continue;
            }
            QVERIFY2(field, qPrintable(key + QStringLiteral(" has no field in the job form")));
            QCOMPARE(rowLabelOf(form, field), QString::fromUtf8(option.label));
            ++fields;
            // The composite fields (the model box, the validation picker) carry tooltips of their own parts.
            if (key == QLatin1String("model") || key == QLatin1String("val_data") || key == QLatin1String("val_split")) continue;
            QVERIFY2(field->toolTip().contains(QString::fromUtf8(option.help).mid(1)),
                     qPrintable(key + QStringLiteral(": ") + field->toolTip()));
        }
        QVERIFY(fields > 40);
    }

    void aNewFormShowsTheTablesDefaults()
    {
        JobForm form;
        for (const TrainerOption& option : ringmaster::protocol::trainerOptions()) {
            if (option.owner == OptionOwner::Launcher || option.type == OptionType::Real) continue; // reals: below
            const QString key = QString::fromLatin1(option.key);
            if (key == QLatin1String("model") || key == QLatin1String("val_data") || key == QLatin1String("val_split")) continue;
            // A choice whose default is no value (backend: by device) shows "default" first.
            const bool ownDefault = option.type == OptionType::Choice && !*option.defaultValue;
            QCOMPARE(shownText(form.fieldOfTrainerOption(key)), ownDefault ? QStringLiteral("default") : QString::fromUtf8(option.defaultValue));
        }
        for (const char* key : {"lr", "bucket_mb", "loss_scale", "lr_gamma", "momentum", "weight_decay", "collective_timeout"}) {
            QCOMPARE(shownText(form.fieldOfTrainerOption(QLatin1String(key))).toDouble(), ringmaster::ui::optionDefaultReal(key));
        }
        // A new job spells out the table's defaults, typed.
        const QJsonObject trainer = form.job(QStringLiteral("cpu"), 2, {}).trainer;
        QCOMPARE(trainer.value(QStringLiteral("batch_size")), QJsonValue(64));
        QCOMPARE(trainer.value(QStringLiteral("momentum")), QJsonValue(0.9));
        QVERIFY(!trainer.contains(QStringLiteral("bucket_mb"))); // untouched: the trainer's own default applies
        QVERIFY(!trainer.contains(QStringLiteral("backend")));
    }

    void moreOptionsReachTheJobTyped()
    {
        JobForm form;
        MoreTrainerOptions* more = form.moreTrainerOptions();
        QVERIFY(!more->isOpen());
        more->setOpen(true);
        QVERIFY(more->isOpen());
        qobject_cast<QLineEdit*>(form.fieldOfTrainerOption(QStringLiteral("bucket_mb")))->setText(QStringLiteral("50"));
        qobject_cast<QCheckBox*>(form.fieldOfTrainerOption(QStringLiteral("tf32")))->setChecked(false);
        qobject_cast<QSpinBox*>(form.fieldOfTrainerOption(QStringLiteral("threads")))->setValue(3);
        qobject_cast<QComboBox*>(form.fieldOfTrainerOption(QStringLiteral("local_allreduce")))->setCurrentText(QStringLiteral("gloo"));
        qobject_cast<QComboBox*>(form.fieldOfTrainerOption(QStringLiteral("backend")))->setCurrentText(QStringLiteral("gloo"));
        const QJsonObject trainer = form.job(QStringLiteral("cpu"), 2, {}).trainer;
        QCOMPARE(trainer.value(QStringLiteral("bucket_mb")), QJsonValue(50.0));
        QCOMPARE(trainer.value(QStringLiteral("tf32")), QJsonValue(false));
        QCOMPARE(trainer.value(QStringLiteral("threads")), QJsonValue(3));
        QCOMPARE(trainer.value(QStringLiteral("local_allreduce")), QJsonValue(QStringLiteral("gloo")));
        QCOMPARE(trainer.value(QStringLiteral("backend")), QJsonValue(QStringLiteral("gloo")));
        QVERIFY(!trainer.contains(QStringLiteral("log_every")));
        QVERIFY(!trainer.contains(QStringLiteral("data_cache")));
        form.resize(560, form.sizeHint().height());
        form.show();
        ringmaster::ui::test::screenshot(form, "more-trainer-options.png");
    }

    void aLoadedJobsValuesAreShownAndKept()
    {
        JobForm form;
        ringmaster::supervisor::JobSpec job = ringmaster::supervisor::defaultJob(0);
        job.trainer.insert(QStringLiteral("log_every"), 7);
        job.trainer.insert(QStringLiteral("deterministic"), true);
        job.trainer.insert(QStringLiteral("normalize"), QStringLiteral("none"));
        job.trainer.insert(QStringLiteral("data_placement"), QStringLiteral("host"));
        job.trainer.insert(QStringLiteral("rendezvous_timeout"), 60);
        form.setJob(job);
        QCOMPARE(shownText(form.fieldOfTrainerOption(QStringLiteral("log_every"))), QStringLiteral("7"));
        QCOMPARE(shownText(form.fieldOfTrainerOption(QStringLiteral("deterministic"))), QStringLiteral("true"));
        QCOMPARE(shownText(form.fieldOfTrainerOption(QStringLiteral("normalize"))), QStringLiteral("none"));
        QCOMPARE(shownText(form.fieldOfTrainerOption(QStringLiteral("data_placement"))), QStringLiteral("host"));
        QCOMPARE(shownText(form.fieldOfTrainerOption(QStringLiteral("rendezvous_timeout"))), QStringLiteral("60"));
        const QJsonObject trainer = form.job(QStringLiteral("cpu"), 2, {}).trainer;
        QCOMPARE(trainer.value(QStringLiteral("log_every")), QJsonValue(7));
        QCOMPARE(trainer.value(QStringLiteral("deterministic")), QJsonValue(true));
        QCOMPARE(trainer.value(QStringLiteral("rendezvous_timeout")), QJsonValue(60));
        // Cleared by the user: the option's own default applies again (no key).
        qobject_cast<QLineEdit*>(form.fieldOfTrainerOption(QStringLiteral("normalize")))->clear();
        QVERIFY(!form.job(QStringLiteral("cpu"), 2, {}).trainer.contains(QStringLiteral("normalize")));
        // A job's backend shown and kept; "default" picked again drops it.
        job.trainer.insert(QStringLiteral("backend"), QStringLiteral("gloo"));
        form.setJob(job);
        auto* backend = qobject_cast<QComboBox*>(form.fieldOfTrainerOption(QStringLiteral("backend")));
        QCOMPARE(backend->currentText(), QStringLiteral("gloo"));
        QCOMPARE(form.job(QStringLiteral("cpu"), 2, {}).trainer.value(QStringLiteral("backend")), QJsonValue(QStringLiteral("gloo")));
        backend->setCurrentIndex(0);
        QVERIFY(!form.job(QStringLiteral("cpu"), 2, {}).trainer.contains(QStringLiteral("backend")));
    }

    void aScriptJobHidesThem()
    {
        JobForm form;
        form.show();
        QVERIFY(form.moreTrainerOptions()->isVisible());
        form.kindBox()->setCurrentIndex(1); // Your script
        QVERIFY(!form.moreTrainerOptions()->isVisible());
    }
};

QTEST_MAIN(TestTrainerOptionFields)
#include "tst_trainer_option_fields.moc"
