// The job form's "Your script" kind: the fields become the script job that ringmaster-launch --script
// runs (script, arguments split as a shell would, interpreter, patterns, TensorBoard folder, hang detection
// off unless given), the trainer's fields are hidden and not written, a job file round-trips, and every
// problem (missing script, interpreter missing or without torch, bad pattern) keeps Start disabled.
// The interpreter check is the real one: /usr/bin/python3 with python3-torch, and a fake without torch.
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QTemporaryDir>
#include <QTest>

#include "ui_test_support.h"
#include "ui/form/input_pickers.h"
#include "ui/form/job_form.h"
#include "ui/form/script_fields.h"

using ringmaster::supervisor::JobSpec;
using ringmaster::ui::JobForm;

using ringmaster::ui::test::writeFile;
using ringmaster::ui::test::settled;

namespace {

constexpr int kCheckTimeoutMs = 120000; // a cold `import torch` on 2 shared cores
constexpr char kPython[] = "/usr/bin/python3";

} // namespace

class TestScriptForm : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    QString m_script;

    void fillScript(JobForm& form, const QString& python = QString::fromLatin1(kPython))
    {
        form.kindBox()->setCurrentIndex(1);
        auto* fields = form.scriptFields();
        fields->scriptEdit()->setText(m_script);
        fields->argumentsEdit()->setText(QStringLiteral("--epochs 3 --tag \"a b\""));
        fields->pythonEdit()->setText(python);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_script = writeFile(m_dir.filePath(QStringLiteral("train.py")), "print('loss: 1')\n");
        QVERIFY(!m_script.isEmpty());
        QDir::setCurrent(m_dir.path()); // the default output folder "runs" is made here
    }

    void builtInKindStartsNoInterpreter()
    {
        JobForm form;
        QVERIFY(settled(form, kCheckTimeoutMs));
        QVERIFY(!form.isScript());
        QVERIFY(!form.scriptFields()->isVisibleTo(&form));
        QVERIFY(form.scriptFields()->interpreterNote()->text().isEmpty()); // never asked python anything
        QVERIFY(form.modelBox()->isVisibleTo(&form));
    }

    void scriptKindWritesTheScriptJob()
    {
        JobForm form;
        fillScript(form);
        auto* fields = form.scriptFields();
        fields->patternsEdit()->setPlainText(QStringLiteral("it (?<step>\\d+) l (?<l>[0-9.]+)\n\nacc=(?<acc>[0-9.]+)"));
        fields->tensorboardEdit()->setText(m_dir.filePath(QStringLiteral("tb")));
        QVERIFY(form.isChecking()); // the interpreter is being asked
        QVERIFY(settled(form, kCheckTimeoutMs));
        QVERIFY2(form.isValid(), qPrintable(form.problems().join(QLatin1Char('\n'))));
        QVERIFY2(fields->interpreterNote()->text().startsWith(QStringLiteral("torch 1.13")), qPrintable(fields->interpreterNote()->text()));
        QCOMPARE(fields->torchVersion().left(4), QStringLiteral("1.13"));
        // The trainer's model, data and schedule are hidden, so are evaluation and checkpoints.
        QVERIFY(fields->isVisibleTo(&form));
        QVERIFY(!form.modelBox()->isVisibleTo(&form));
        QVERIFY(!form.batchSizeBox()->isVisibleTo(&form));
        QCOMPARE(form.heartbeatBox()->value(), 0.0); // hang detection off by default for a script
        QCOMPARE(form.heartbeatBox()->text(), QStringLiteral("off"));

        const JobSpec job = form.job(QStringLiteral("cpu"), 2, {});
        QCOMPARE(job.script, m_script);
        QCOMPARE(job.scriptArgs, (QStringList{QStringLiteral("--epochs"), QStringLiteral("3"), QStringLiteral("--tag"), QStringLiteral("a b")}));
        QCOMPARE(job.python, QString::fromLatin1(kPython));
        QCOMPARE(job.metricPatterns, (QStringList{QStringLiteral("it (?<step>\\d+) l (?<l>[0-9.]+)"), QStringLiteral("acc=(?<acc>[0-9.]+)")}));
        QCOMPARE(job.tensorboardDir, m_dir.filePath(QStringLiteral("tb")));
        QVERIFY(job.trainer.isEmpty());
        QVERIFY(!job.heartbeatTimeoutGiven);
        QCOMPARE(job.nproc, 2);

        // The job file round-trips through a new form, kind included.
        const JobSpec loaded = JobSpec::fromJson(job.toJson(), QStringLiteral("test"));
        JobForm again;
        again.setJob(loaded);
        QVERIFY(again.isScript());
        QVERIFY(settled(again, kCheckTimeoutMs));
        const JobSpec back = again.job(QStringLiteral("cpu"), 2, {});
        QCOMPARE(back.toJson(), job.toJson());
    }

    void hangDetectionAndSwitchingBack()
    {
        JobForm form;
        fillScript(form);
        form.heartbeatBox()->setValue(30);
        QVERIFY(settled(form, kCheckTimeoutMs));
        JobSpec job = form.job(QStringLiteral("cpu"), 2, {});
        QVERIFY(job.heartbeatTimeoutGiven);
        QCOMPARE(job.heartbeatTimeoutSec, 30.0);

        // Back to the built-in trainer: no script settings, the trainer's fields written, hang detection on.
        form.setJob(job);
        form.kindBox()->setCurrentIndex(0);
        QVERIFY(settled(form, kCheckTimeoutMs));
        QVERIFY2(form.problems().isEmpty() || !form.problems().join(QString()).contains(QStringLiteral("Heartbeat")),
                 qPrintable(form.problems().join(QLatin1Char('\n'))));
        job = form.job(QStringLiteral("cpu"), 2, {});
        QVERIFY(!job.isScript());
        QVERIFY(job.scriptArgs.isEmpty());
        QCOMPARE(job.trainer.value(QStringLiteral("model")).toString(), QStringLiteral("cnn"));
        QCOMPARE(job.trainer.value(QStringLiteral("batch_size")).toInteger(), 64);
        QVERIFY(job.heartbeatTimeoutSec >= 30.0);
        // Off is only for scripts.
        form.heartbeatBox()->setValue(0);
        QVERIFY(form.problems().join(QString()).contains(QStringLiteral("Heartbeat timeout must be above 0 s")));
    }

    void problemsKeepStartDisabled_data()
    {
        QTest::addColumn<QString>("script");
        QTest::addColumn<QString>("python");
        QTest::addColumn<QString>("patterns");
        QTest::addColumn<QString>("needle");
        const QString noTorch = writeFile(m_dir.filePath(QStringLiteral("python-without-torch")),
                                          "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n", true);
        QTest::newRow("missing script") << m_dir.filePath(QStringLiteral("nope.py")) << QString::fromLatin1(kPython) << QString()
                                        << QStringLiteral("does not exist");
        QTest::newRow("no script") << QString() << QString::fromLatin1(kPython) << QString() << QStringLiteral("Choose your training script");
        QTest::newRow("missing interpreter") << m_script << QStringLiteral("/nonexistent/python3") << QString()
                                             << QStringLiteral("--python /nonexistent/python3: no such interpreter");
        QTest::newRow("interpreter without torch") << m_script << noTorch << QString() << QStringLiteral("cannot import torch");
        QTest::newRow("bad pattern") << m_script << QString::fromLatin1(kPython) << QStringLiteral("loss=(?<loss>[0-9")
                                     << QStringLiteral("is not a valid regular expression");
        QTest::newRow("pattern without a group") << m_script << QString::fromLatin1(kPython) << QStringLiteral("loss=[0-9]+")
                                                 << QStringLiteral("has no named group");
    }

    void problemsKeepStartDisabled()
    {
        QFETCH(QString, script);
        QFETCH(QString, python);
        QFETCH(QString, patterns);
        QFETCH(QString, needle);
        JobForm form;
        fillScript(form, python);
        form.scriptFields()->scriptEdit()->setText(script);
        form.scriptFields()->patternsEdit()->setPlainText(patterns);
        QVERIFY(settled(form, kCheckTimeoutMs));
        QVERIFY(!form.isValid());
        QVERIFY2(form.problems().join(QLatin1Char('\n')).contains(needle), qPrintable(form.problems().join(QLatin1Char('\n'))));
    }
};

QTEST_MAIN(TestScriptForm)
#include "tst_script_form.moc"
