// The job form's model and data pickers and its live probe, against a fake ringmaster-trainer (a shell
// script written here) that records its argv and answers --probe with a canned JSON line, an error
// and exit 2, or by sleeping, depending on the paths it is given. Checked: the exact flags the form
// passes, the summaries shown under the rows, a rejection under the row it concerns with Start disabled,
// a newer probe killing an older slow one, the watchdog, and the job round trip of every new key.
#include <QAction>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <cerrno>
#include <csignal>

#include "ui_test_support.h"
#include "ui/panes/gpu_panel.h"
#include "ui/form/input_pickers.h"
#include "ui/form/job_form.h"
#include "ui/main_window.h"

using namespace ringmaster;
using namespace ringmaster::ui;

using ringmaster::ui::test::writeFile;
using ringmaster::ui::test::readJson;
using ringmaster::ui::test::screenshot;

namespace {

constexpr int kWaitMs = 30000;
constexpr int kShortWatchdogMs = 1000;
const char* const kNoNvml = "/nonexistent/libnvidia-ml.so.1";
const char* const kImageFolderReport =
    R"({"data":{"format":"image-folder","path":"/d","train_samples":1200,"val_samples":300,"val_source":"split",)"
    R"("input_shape":[3,32,32],"input_dtype":"uint8","classes":["cat","dog"],"class_count":2,"target_shape":[]},)"
    R"("model":{"name":"cnn","kind":"builtin","parameters":123456,"output_shape":[64,2],"loss":"cross_entropy"}})";

// The fake trainer: appends "--- PID" and one argument per line to `log`, then answers by the paths given.
QString writeFakeTrainer(const QString& dir, const QString& log)
{
    const QString path = dir + QStringLiteral("/fake-trainer.sh");
    writeFile(path,
              "#!/bin/sh\n"
              "{ echo \"--- $$\"; for a in \"$@\"; do echo \"$a\"; done; } >> '" + QFile::encodeName(log) + "'\n"
              "case \"$*\" in\n"
              "  *probe-slow*) exec sleep 60 ;;\n"
              "  *probe-bad-model*) echo 'ringmaster-trainer: error: --model bad: not a TorchScript module' >&2; exit 2 ;;\n"
              "  *probe-bad-data*) echo 'loading' >&2; echo 'ringmaster-trainer: error: --data bad: no class sub-folders' >&2; exit 2 ;;\n"
              "  *probe-old*) echo 'ringmaster-trainer: error: --probe needs a value' >&2; exit 2 ;;\n"
              "esac\n"
              "echo 'reading the data'\n"
              "echo '" + QByteArray(kImageFolderReport) + "'\n",
              true);
    return path;
}

struct Invocation
{
    qint64 pid = 0;
    QStringList arguments;
};

QList<Invocation> invocations(const QString& log)
{
    QFile file(log);
    QList<Invocation> calls;
    if (!file.open(QIODevice::ReadOnly)) return calls;
    for (const QString& line : QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        if (line.startsWith(QStringLiteral("--- "))) calls.append(Invocation{line.mid(4).toLongLong(), {}});
        else if (!calls.isEmpty()) calls.last().arguments << line;
    }
    return calls;
}

bool processGone(qint64 pid)
{
    return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

class TrainerOverride
{
public:
    explicit TrainerOverride(const QString& path) : m_saved(qgetenv("RINGMASTER_TRAINER"))
    {
        qputenv("RINGMASTER_TRAINER", QFile::encodeName(path));
    }
    ~TrainerOverride() { qputenv("RINGMASTER_TRAINER", m_saved); }
    TrainerOverride(const TrainerOverride&) = delete;
    TrainerOverride& operator=(const TrainerOverride&) = delete;

private:
    QByteArray m_saved;
};

} // namespace

class TestDataProbe : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;
    QString m_log;
    QString m_trainer;

    QString path(const char* name) const { return m_root.path() + QLatin1Char('/') + QLatin1String(name); }

    // A window on 2 CPU ranks writing into the test's folder, its form's probe answered once.
    void prepare(MainWindow& window)
    {
        window.setConfirmOnClose(false);
        window.resize(1360, 860);
        window.show();
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        window.jobForm()->outputEdit()->setText(m_root.path());
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled() && !window.jobForm()->isProbing(), kWaitMs);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", kNoNvml);
        QVERIFY(m_root.isValid());
        m_log = path("argv.log");
        m_trainer = writeFakeTrainer(m_root.path(), m_log);
        for (const char* dir : {"cats-dogs", "probe-slow", "probe-bad-data", "probe-old"}) QVERIFY(QDir().mkpath(path(dir)));
        for (const char* file : {"table.csv", "valid.csv", "model.pt", "probe-bad-model.pt"}) writeFile(path(file), "x");
    }

    void init() { QFile::remove(m_log); }

    // A burst of edits makes one probe, with exactly the run's trainer flags and --probe.
    void probePassesTheFormsFlags()
    {
        const TrainerOverride fake(m_trainer);
        JobForm form;
        QTRY_VERIFY_WITH_TIMEOUT(!form.isProbing(), kWaitMs); // the default job's probe
        QCOMPARE(invocations(m_log).size(), 1);
        QCOMPARE(invocations(m_log).last().arguments,
                 (QStringList{QStringLiteral("--model"), QStringLiteral("cnn"), QStringLiteral("--data"), QStringLiteral("fashion-mnist"),
                              QStringLiteral("--batch-size"), QStringLiteral("64"), QStringLiteral("--probe")}));

        form.modelBox()->setFileChooser([this] { return path("model.pt"); });
        form.modelBox()->setCurrentIndex(form.modelBox()->chooseFileIndex()); // "Model file…"
        form.dataBox()->setCurrentText(path("table.csv"));
        form.validationField()->setMode(ValidationField::Mode::HoldOut);
        form.validationField()->fractionBox()->setValue(0.25);
        form.labelColumnEdit()->setText(QStringLiteral("price"));
        form.imageSizeEdit()->setText(QStringLiteral("28,28"));
        form.lossBox()->setCurrentText(QStringLiteral("mse"));
        form.batchSizeBox()->setValue(32);
        QVERIFY(form.isProbing());
        QCOMPARE(form.dataNote()->text(), QStringLiteral("checking…"));
        QCOMPARE(form.modelNote()->text(), QStringLiteral("checking…"));
        QTRY_VERIFY_WITH_TIMEOUT(!form.isProbing(), kWaitMs);
        QCOMPARE(invocations(m_log).size(), 2); // debounced: one probe for the whole burst
        QCOMPARE(invocations(m_log).last().arguments,
                 (QStringList{QStringLiteral("--model"), path("model.pt"), QStringLiteral("--data"), path("table.csv"),
                              QStringLiteral("--val-split"), QStringLiteral("0.25"), QStringLiteral("--label-column"),
                              QStringLiteral("price"), QStringLiteral("--image-size"), QStringLiteral("28,28"),
                              QStringLiteral("--loss"), QStringLiteral("mse"), QStringLiteral("--batch-size"),
                              QStringLiteral("32"), QStringLiteral("--probe")}));

        form.validationField()->setMode(ValidationField::Mode::Path);
        form.validationField()->pathEdit()->setText(path("valid.csv"));
        form.dataBox()->setCurrentText(path("cats-dogs")); // not CSV: no label column
        QVERIFY(!form.labelColumnEdit()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(!form.isProbing(), kWaitMs);
        QCOMPARE(invocations(m_log).size(), 3);
        QCOMPARE(invocations(m_log).last().arguments,
                 (QStringList{QStringLiteral("--model"), path("model.pt"), QStringLiteral("--data"), path("cats-dogs"),
                              QStringLiteral("--val-data"), path("valid.csv"), QStringLiteral("--image-size"),
                              QStringLiteral("28,28"), QStringLiteral("--loss"), QStringLiteral("mse"),
                              QStringLiteral("--batch-size"), QStringLiteral("32"), QStringLiteral("--probe")}));

        form.setWorldSize(4); // not a probe input: the answer stands, no new probe
        QVERIFY(!form.isProbing());
        QTest::qWait(600);
        QCOMPARE(invocations(m_log).size(), 3);
    }

    // The answer is summarised under the data and model rows, and its sample count is the shard check's.
    void summaryAndSampleCountComeFromTheProbe()
    {
        const TrainerOverride fake(m_trainer);
        MainWindow window;
        prepare(window);
        JobForm* form = window.jobForm();
        form->validationField()->setMode(ValidationField::Mode::HoldOut);
        form->validationField()->fractionBox()->setValue(0.2);
        form->dataBox()->setCurrentText(path("cats-dogs")); // an image folder: the form cannot count it itself
        QVERIFY(form->dataNote()->isVisible());
        QCOMPARE(form->dataNote()->text(), QStringLiteral("checking…"));
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing(), kWaitMs);
        QCOMPARE(form->dataNote()->text(),
                 QStringLiteral("image folder · 1,200 training + 300 validation samples · 2 classes (cat, dog) · 3×32×32"));
        QCOMPARE(form->modelNote()->text(), QStringLiteral("cnn · 123,456 parameters · output [64, 2] · loss cross_entropy"));
        QVERIFY(form->dataNote()->isVisible() && form->modelNote()->isVisible());
        screenshot(window, "probe-summary.png");

        form->batchSizeBox()->setValue(601); // 1200 over 2 ranks: 600 each
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing(), kWaitMs);
        const QString problems = form->problems().join(QLatin1Char(' '));
        QVERIFY2(problems.contains(QStringLiteral("shard of 600 samples (1200 training samples over 2 ranks)")), qPrintable(problems));
        QVERIFY(!window.startAction()->isEnabled());
        form->batchSizeBox()->setValue(600);
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing() && window.startAction()->isEnabled(), kWaitMs);
        QVERIFY(form->problems().isEmpty());
    }

    // Exit 2: the trainer's line in red under the row it names, listed as a problem, and Start disabled with it.
    void rejectionShowsUnderItsRowAndDisablesStart()
    {
        const TrainerOverride fake(m_trainer);
        MainWindow window;
        prepare(window);
        JobForm* form = window.jobForm();

        form->validationField()->setMode(ValidationField::Mode::Path);
        form->validationField()->pathEdit()->setText(path("cats-dogs"));
        form->dataBox()->setCurrentText(path("probe-bad-data"));
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing(), kWaitMs);
        const QString dataError = QStringLiteral("--data bad: no class sub-folders");
        QCOMPARE(form->dataNote()->text(), dataError);
        QVERIFY(form->dataNote()->isVisible());
        QVERIFY(form->dataNote()->styleSheet().contains(QStringLiteral("#b00020")));
        QVERIFY(!form->modelNote()->isVisible());
        QVERIFY(form->problems().contains(dataError));
        QVERIFY(form->problemLabel()->text().contains(dataError));
        QVERIFY(!window.startAction()->isEnabled());
        QVERIFY2(window.startAction()->toolTip().contains(dataError), qPrintable(window.startAction()->toolTip()));
        screenshot(window, "probe-error.png");

        form->dataBox()->setCurrentText(path("cats-dogs"));
        form->modelBox()->setModel(path("probe-bad-model.pt"));
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing(), kWaitMs);
        const QString modelError = QStringLiteral("--model bad: not a TorchScript module");
        QCOMPARE(form->modelNote()->text(), modelError);
        QVERIFY(form->modelNote()->isVisible());
        QVERIFY(!form->dataNote()->isVisible());
        QVERIFY(form->problems().contains(modelError));
        QVERIFY(!window.startAction()->isEnabled());
        QVERIFY(window.startAction()->toolTip().contains(modelError));

        form->modelBox()->setModel(QStringLiteral("cnn"));
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing() && window.startAction()->isEnabled(), kWaitMs);
        QVERIFY(form->problems().isEmpty());
    }

    // A trainer from before --probe: said under the data row, but Start is not held back (pre-flight checks).
    void aTrainerWithoutProbeDoesNotBlockStart()
    {
        const TrainerOverride fake(m_trainer);
        MainWindow window;
        prepare(window);
        window.jobForm()->dataBox()->setCurrentText(path("probe-old"));
        QTRY_VERIFY_WITH_TIMEOUT(!window.jobForm()->isProbing(), kWaitMs);
        QVERIFY(window.jobForm()->dataNote()->text().contains(QStringLiteral("cannot probe")));
        QVERIFY(window.jobForm()->problems().isEmpty());
        QVERIFY(window.startAction()->isEnabled());
    }

    // A newer probe kills the older one still running; only the newer one's answer is shown.
    void newerProbeKillsTheOlder()
    {
        const TrainerOverride fake(m_trainer);
        JobForm form;
        QTRY_VERIFY_WITH_TIMEOUT(!form.isProbing(), kWaitMs);
        form.dataBox()->setCurrentText(path("probe-slow"));
        QTRY_VERIFY_WITH_TIMEOUT(form.dataProbe()->processId() > 0 && invocations(m_log).size() == 2, kWaitMs);
        const qint64 slow = form.dataProbe()->processId();
        QCOMPARE(invocations(m_log).last().pid, slow);
        QVERIFY(!processGone(slow));
        QCOMPARE(form.dataNote()->text(), QStringLiteral("checking…"));

        form.dataBox()->setCurrentText(path("cats-dogs"));
        QTRY_VERIFY_WITH_TIMEOUT(processGone(slow), kWaitMs); // killed and reaped at once, not after its 60 s
        QTRY_VERIFY_WITH_TIMEOUT(!form.isProbing(), kWaitMs);
        QCOMPARE(invocations(m_log).size(), 3);
        QVERIFY(invocations(m_log).last().arguments.contains(path("cats-dogs")));
        QVERIFY(form.probeOutcome().answered());
        QVERIFY(form.dataNote()->text().startsWith(QStringLiteral("image folder")));
    }

    // A probe that does not answer in time is killed, and the form says so without blocking Start.
    void watchdogStopsAHungProbe()
    {
        const TrainerOverride fake(m_trainer);
        MainWindow window;
        prepare(window);
        JobForm* form = window.jobForm();
        form->dataProbe()->setTimeoutMs(kShortWatchdogMs);
        form->dataBox()->setCurrentText(path("probe-slow"));
        QTRY_VERIFY_WITH_TIMEOUT(form->dataProbe()->processId() > 0, kWaitMs);
        const qint64 pid = form->dataProbe()->processId();
        QTRY_VERIFY_WITH_TIMEOUT(!form->isProbing(), kWaitMs);
        QCOMPARE(form->probeOutcome().kind, ProbeOutcome::Kind::TimedOut);
        QVERIFY2(form->dataNote()->text().contains(QStringLiteral("did not answer in 1 s and was stopped")),
                 qPrintable(form->dataNote()->text()));
        QTRY_VERIFY_WITH_TIMEOUT(processGone(pid), kWaitMs);
        QVERIFY(form->problems().isEmpty());
        QVERIFY(window.startAction()->isEnabled());
    }

    // Every new key survives load -> form -> save; unset values are not written; edits are.
    void newKeysRoundTrip()
    {
        const TrainerOverride fake(m_trainer);
        const QJsonObject launch{{QStringLiteral("device"), QStringLiteral("cpu")}, {QStringLiteral("nproc"), 2},
                                 {QStringLiteral("output_root"), m_root.path()}};
        const QJsonObject csvJob{{QStringLiteral("version"), 1},
                                 {QStringLiteral("launch"), launch},
                                 {QStringLiteral("trainer"),
                                  QJsonObject{{QStringLiteral("model"), path("model.pt")},
                                              {QStringLiteral("data"), path("table.csv")},
                                              {QStringLiteral("val_data"), path("valid.csv")},
                                              {QStringLiteral("label_column"), QStringLiteral("price")},
                                              {QStringLiteral("image_size"), QStringLiteral("28,28")},
                                              {QStringLiteral("loss"), QStringLiteral("bce")},
                                              {QStringLiteral("batch_size"), 16}}}};
        const QJsonObject splitJob{{QStringLiteral("version"), 1},
                                   {QStringLiteral("launch"), launch},
                                   {QStringLiteral("trainer"),
                                    QJsonObject{{QStringLiteral("data"), path("cats-dogs")},
                                                {QStringLiteral("val_split"), 0.125},
                                                {QStringLiteral("loss"), QStringLiteral("auto")}}}};
        const QString saved = path("saved.json");
        for (const QJsonObject& loaded : {csvJob, splitJob}) {
            writeFile(path("loaded.json"), QJsonDocument(loaded).toJson());
            MainWindow window;
            window.setConfirmOnClose(false);
            window.loadJob(supervisor::JobSpec::load(path("loaded.json")));
            window.currentJob().save(saved);
            const QJsonObject back = readJson(saved);
            QCOMPARE(back.value(QStringLiteral("trainer")).toObject(), loaded.value(QStringLiteral("trainer")).toObject());
        }

        // What a loaded job shows.
        writeFile(path("loaded.json"), QJsonDocument(csvJob).toJson());
        MainWindow window;
        window.setConfirmOnClose(false);
        window.loadJob(supervisor::JobSpec::load(path("loaded.json")));
        JobForm* form = window.jobForm();
        QCOMPARE(form->modelBox()->model(), path("model.pt"));
        QCOMPARE(form->modelBox()->currentText(), QStringLiteral("model.pt"));
        QCOMPARE(form->validationField()->mode(), ValidationField::Mode::Path);
        QCOMPARE(form->validationField()->pathEdit()->text(), path("valid.csv"));
        QCOMPARE(form->labelColumnEdit()->text(), QStringLiteral("price"));
        QVERIFY(form->labelColumnEdit()->isEnabled());
        QCOMPARE(form->imageSizeEdit()->text(), QStringLiteral("28,28"));
        QCOMPARE(form->lossBox()->currentText(), QStringLiteral("bce"));

        // Unset by the user: the keys go; a hold-out is written as a number.
        form->validationField()->setMode(ValidationField::Mode::HoldOut);
        form->validationField()->fractionBox()->setValue(0.3);
        form->labelColumnEdit()->clear();
        form->imageSizeEdit()->clear();
        form->lossBox()->setCurrentText(QStringLiteral("auto"));
        form->modelBox()->setModel(QStringLiteral("mlp"));
        window.currentJob().save(saved);
        const QJsonObject trainer = readJson(saved).value(QStringLiteral("trainer")).toObject();
        const QJsonObject expected{{QStringLiteral("model"), QStringLiteral("mlp")},
                                   {QStringLiteral("data"), path("table.csv")},
                                   {QStringLiteral("val_split"), 0.3},
                                   {QStringLiteral("batch_size"), 16}};
        QCOMPARE(trainer, expected);

        // A job without the new keys: saved without them.
        window.loadJob(supervisor::defaultJob(0));
        window.currentJob().save(saved);
        QCOMPARE(readJson(saved).value(QStringLiteral("trainer")).toObject(), supervisor::defaultJob(0).trainer);
    }

    // "Model file…": the chosen file becomes the model; a cancelled dialog keeps the model it had.
    void modelFileChoice()
    {
        JobForm form;
        ModelBox* box = form.modelBox();
        box->setModel(QStringLiteral("mlp"));
        box->setFileChooser([] { return QString(); });
        box->setCurrentIndex(box->chooseFileIndex());
        QCOMPARE(box->model(), QStringLiteral("mlp"));
        QCOMPARE(box->currentText(), QStringLiteral("mlp"));
        box->setFileChooser([this] { return path("model.pt"); });
        box->setCurrentIndex(box->chooseFileIndex());
        QCOMPARE(box->model(), path("model.pt"));
        QVERIFY(box->isFile());
        QCOMPARE(box->currentText(), QStringLiteral("model.pt"));
        QVERIFY(form.problems().join(QLatin1Char(' ')).indexOf(QStringLiteral("Model file")) < 0);
        box->setModel(path("missing.pt"));
        QVERIFY(form.problems().contains(QStringLiteral("Model file %1 does not exist.").arg(path("missing.pt"))));
    }
};

QTEST_MAIN(TestDataProbe)
#include "tst_data_probe.moc"
