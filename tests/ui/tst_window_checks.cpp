// The window's checks and bookkeeping, without a real training run (a stub shell script stands in for
// ringmaster-trainer where one is launched): the form stays within its panel and checks a rank's
// shard, a job survives load -> form -> save, pre-flight runs off the GUI thread, this app's own ranks
// do not make a GPU busy, and the failure banner shows no stack frames.
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScopeGuard>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <memory>

#include <zlib.h>

#include "ui_test_support.h"
#include "ui/panes/gpu_panel.h"
#include "ui/form/job_form.h"
#include "ui/main_window.h"
#include "supervisor/run_supervisor.h"
#include "ui/form/trainer_note.h"
#include "ui/form/training_set_size.h"

using namespace ringmaster;
using namespace ringmaster::ui;

using ringmaster::ui::test::writeFile;
using ringmaster::ui::test::readJson;

namespace {

constexpr int kStubValidateSeconds = 3;
constexpr int kCheckTimeoutMs = 30000;
const char* const kNoNvml = "/nonexistent/libnvidia-ml.so.1";

// A stand-in for ringmaster-trainer: --version says what a CUDA build says, --validate-only sleeps, then
// passes; as a rank it runs `rank`.
QString writeStubTrainer(const QString& dir, const QString& name, int validateSeconds, const QByteArray& rank)
{
    const QString path = dir + QLatin1Char('/') + name;
    writeFile(path,
              "#!/bin/sh\n"
              R"SH([ "$1" = --version ] && { printf 'ringmaster-trainer 0.1.0\nLibTorch 2.11.0\nCUDA: yes (13.0)\nNCCL: yes (2.28.9)\nGloo: yes\n'; exit 0; })SH" "\n"
              "for a in \"$@\"; do\n"
              "  if [ \"$a\" = --validate-only ]; then sleep " + QByteArray::number(validateSeconds) + "; exit 0; fi\n"
              "done\n" + rank + "\n",
              true);
    return path;
}

// The IDX header of an images file: magic (0, 0, unsigned byte, 3 dims), count, rows, columns (big-endian).
QByteArray idxImagesHeader(quint32 count)
{
    QByteArray header("\x00\x00\x08\x03", 4);
    for (const quint32 value : {count, 28u, 28u}) {
        for (int shift = 24; shift >= 0; shift -= 8) header.append(static_cast<char>((value >> shift) & 0xff));
    }
    return header;
}

// Points RINGMASTER_TRAINER at a stub for one test (the job itself names no trainer).
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

// Where the left panel shows its content, in window coordinates.
QRect visiblePanel(QWidget* window, QWidget* inside)
{
    QWidget* widget = inside;
    while (widget && !qobject_cast<QScrollArea*>(widget)) widget = widget->parentWidget();
    auto* scroll = qobject_cast<QScrollArea*>(widget);
    if (!scroll) return {};
    return QRect(scroll->viewport()->mapTo(window, QPoint(0, 0)), scroll->viewport()->size());
}

QString describe(const QWidget* widget)
{
    if (const auto* label = qobject_cast<const QLabel*>(widget)) return QStringLiteral("label \"%1\"").arg(label->text());
    if (const auto* button = qobject_cast<const QPushButton*>(widget)) return QStringLiteral("button \"%1\"").arg(button->text());
    return QString::fromLatin1(widget->metaObject()->className()) + QLatin1Char(' ') + widget->toolTip().left(40);
}

// Equal JSON, numbers compared exactly (as doubles and, where whole, as integers).
bool sameJson(const QJsonValue& a, const QJsonValue& b, const QString& where, QString* difference)
{
    if (a.type() != b.type()) {
        *difference = QStringLiteral("%1: type %2 vs %3").arg(where).arg(a.type()).arg(b.type());
        return false;
    }
    if (a.isObject()) {
        const QJsonObject x = a.toObject();
        const QJsonObject y = b.toObject();
        if (x.keys() != y.keys()) {
            *difference = QStringLiteral("%1: keys [%2] vs [%3]").arg(where, x.keys().join(QLatin1Char(',')), y.keys().join(QLatin1Char(',')));
            return false;
        }
        for (const QString& key : x.keys()) {
            if (!sameJson(x.value(key), y.value(key), where + QLatin1Char('.') + key, difference)) return false;
        }
        return true;
    }
    if (a.isArray()) {
        const QJsonArray x = a.toArray();
        const QJsonArray y = b.toArray();
        if (x.size() != y.size()) {
            *difference = QStringLiteral("%1: %2 vs %3 items").arg(where).arg(x.size()).arg(y.size());
            return false;
        }
        for (qsizetype i = 0; i < x.size(); ++i) {
            if (!sameJson(x.at(i), y.at(i), QStringLiteral("%1[%2]").arg(where).arg(i), difference)) return false;
        }
        return true;
    }
    if (a.isDouble()) {
        if (a.toDouble() != b.toDouble() || a.toInteger(-1) != b.toInteger(-1)) {
            *difference = QStringLiteral("%1: %2 vs %3").arg(where, QString::number(a.toDouble(), 'g', 17), QString::number(b.toDouble(), 'g', 17));
            return false;
        }
        return true;
    }
    if (a != b) {
        *difference = QStringLiteral("%1: %2 vs %3").arg(where, a.toVariant().toString(), b.toVariant().toString());
        return false;
    }
    return true;
}

} // namespace

class TestWindowChecks : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", kNoNvml); // CPU ranks unless a test asks for the fake NVML
        QVERIFY(m_root.isValid());
    }

    // A batch far beyond a rank's shard: the form stays inside the visible panel, the reason names
    // both numbers, and Start stays disabled.
    void hugeBatchIsRefusedAndNothingIsClipped()
    {
        MainWindow window;
        window.setConfirmOnClose(false);
        window.resize(1600, 1000);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        window.jobForm()->outputEdit()->setText(m_root.path());
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);

        window.jobForm()->batchSizeBox()->setValue(100000);
        QVERIFY(!window.startAction()->isEnabled());
        const QString problems = window.jobForm()->problems().join(QLatin1Char(' '));
        QVERIFY2(problems.contains(QStringLiteral("Batch per rank 100000")) && problems.contains(QStringLiteral("30000 samples")) &&
                     problems.contains(QStringLiteral("60000 training samples")),
                 qPrintable(problems));
        QVERIFY(window.startAction()->toolTip().contains(QStringLiteral("30000")));
        QTest::qWait(100); // the layout settles on posted events; nothing to poll for
        const QString screenshotDir = qEnvironmentVariable("RINGMASTER_SCREENSHOT_DIR");
        if (!screenshotDir.isEmpty()) window.grab().save(screenshotDir + QStringLiteral("/huge-batch.png"));

        const QRect panel = visiblePanel(&window, window.jobForm());
        QVERIFY(panel.width() > 0);
        QList<QWidget*> fields;
        for (auto* parent : {static_cast<QWidget*>(window.jobForm()), static_cast<QWidget*>(window.gpuPanel())}) {
            for (auto* widget : parent->findChildren<QWidget*>()) {
                const bool field = qobject_cast<QAbstractSpinBox*>(widget) || qobject_cast<QComboBox*>(widget) ||
                                   qobject_cast<QLineEdit*>(widget) || qobject_cast<QPushButton*>(widget) ||
                                   qobject_cast<QLabel*>(widget);
                if (field && widget->isVisible()) fields << widget;
            }
        }
        QVERIFY(fields.contains(window.jobForm()->globalBatchLabel()));
        QVERIFY(fields.contains(window.jobForm()->outputEdit()));
        QVERIFY(fields.size() > 30);
        for (QWidget* widget : fields) {
            const QRect rect(widget->mapTo(&window, QPoint(0, 0)), widget->size());
            QVERIFY2(rect.left() >= panel.left() && rect.right() <= panel.right(),
                     qPrintable(QStringLiteral("%1 spans x %2..%3, the panel shows x %4..%5")
                                    .arg(describe(widget)).arg(rect.left()).arg(rect.right()).arg(panel.left()).arg(panel.right())));
        }

        window.jobForm()->batchSizeBox()->setValue(30000); // exactly one shard: fine
        QVERIFY(window.jobForm()->problems().isEmpty());
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
    }

    // A folder of IDX files: the count comes from the header (plain or gzip), checked against the shard.
    void idxFolderShardComesFromTheHeader()
    {
        const QString plain = m_root.path() + QStringLiteral("/idx-plain");
        const QString packed = m_root.path() + QStringLiteral("/idx-gz");
        QVERIFY(QDir().mkpath(plain) && QDir().mkpath(packed));
        writeFile(plain + QStringLiteral("/train-images-idx3-ubyte"), idxImagesHeader(1001));
        const QByteArray gzPath = QFile::encodeName(packed + QStringLiteral("/train-images-idx3-ubyte.gz"));
        gzFile gz = gzopen(gzPath.constData(), "wb");
        QVERIFY(gz);
        const QByteArray header = idxImagesHeader(70000);
        QCOMPARE(gzwrite(gz, header.constData(), static_cast<unsigned>(header.size())), static_cast<int>(header.size()));
        gzclose(gz);
        QCOMPARE(trainingSetSize(plain).samples, qint64(1001));
        QCOMPARE(trainingSetSize(packed).samples, qint64(70000));
        QCOMPARE(trainingSetSize(QStringLiteral("fashion-mnist")).samples, qint64(60000));
        QCOMPARE(trainingSetSize(QStringLiteral("synthetic"), 4096).samples, qint64(4096));
        QVERIFY(!trainingSetSize(m_root.path()).error.isEmpty()); // no IDX file there
        QCOMPARE(shardSize(1001, 2, false), qint64(501)); // DistributedSampler pads
        QCOMPARE(shardSize(1001, 2, true), qint64(500));  // or drops the tail

        JobForm form;
        form.setWorldSize(2);
        form.dataBox()->setCurrentText(plain);
        form.batchSizeBox()->setValue(502);
        QVERIFY2(form.problems().join(QLatin1Char(' ')).contains(QStringLiteral("shard of 501 samples (1001 training samples over 2 ranks)")),
                 qPrintable(form.problems().join(QLatin1Char(' '))));
        form.batchSizeBox()->setValue(501);
        QVERIFY(form.problems().isEmpty());
        form.setWorldSize(4); // 1001 over 4 ranks: 251 each
        QVERIFY(form.problems().join(QLatin1Char(' ')).contains(QStringLiteral("shard of 251 samples")));
    }

    // Load -> form -> save keeps every key and every number, including those the form does not show.
    void savedJobEqualsTheLoadedJob()
    {
        const QString loadedPath = m_root.path() + QStringLiteral("/loaded.json");
        const QJsonObject loaded{
            {QStringLiteral("version"), 1},
            {QStringLiteral("launch"),
             QJsonObject{{QStringLiteral("device"), QStringLiteral("cpu")},
                         {QStringLiteral("nproc"), 3},
                         {QStringLiteral("gpus"), QJsonArray{}},
                         {QStringLiteral("output_root"), m_root.path()},
                         {QStringLiteral("run_dir"), QString(m_root.path() + QStringLiteral("/fixed-run"))},
                         {QStringLiteral("master_port"), 29517},
                         {QStringLiteral("max_restarts"), 2},
                         {QStringLiteral("heartbeat_timeout"), 45.25},
                         {QStringLiteral("grace_period"), 7.5},
                         {QStringLiteral("resume"), QString(m_root.path() + QStringLiteral("/old-run/checkpoints/step-00000010.pt"))},
                         {QStringLiteral("trainer_path"), QStringLiteral("/opt/ringmaster/bin/ringmaster-trainer")}}},
            {QStringLiteral("trainer"),
             QJsonObject{{QStringLiteral("model"), QStringLiteral("mlp")},
                         {QStringLiteral("data"), QStringLiteral("fashion-mnist")},
                         {QStringLiteral("epochs"), 3},
                         {QStringLiteral("batch_size"), 48},
                         {QStringLiteral("lr"), 0.0123456789},
                         {QStringLiteral("optimizer"), QStringLiteral("adamw")},
                         {QStringLiteral("momentum"), 0.95},
                         {QStringLiteral("weight_decay"), 0.000123456789},
                         {QStringLiteral("seed"), 1234567},
                         {QStringLiteral("precision"), QStringLiteral("bf16")},
                         {QStringLiteral("eval_batch_size"), 2500},
                         {QStringLiteral("drop_last"), true},
                         {QStringLiteral("find_unused_parameters"), true},
                         {QStringLiteral("label_smoothing"), 0.1}}}};
        writeFile(loadedPath, QJsonDocument(loaded).toJson());

        MainWindow window;
        window.setConfirmOnClose(false);
        window.loadJob(supervisor::JobSpec::load(loadedPath));
        const QString savedPath = m_root.path() + QStringLiteral("/saved.json");
        window.currentJob().save(savedPath); // what Save job… writes
        QString difference;
        QVERIFY2(sameJson(readJson(loadedPath), readJson(savedPath), QStringLiteral("job"), &difference), qPrintable(difference));

        // A field the user edits is written, the rest still comes through unchanged.
        QCOMPARE(window.jobForm()->precisionBox()->currentText(), QStringLiteral("bf16"));
        window.jobForm()->batchSizeBox()->setValue(96);
        window.jobForm()->precisionBox()->setCurrentText(QStringLiteral("fp16"));
        window.currentJob().save(savedPath);
        QJsonObject expected = loaded;
        QJsonObject trainer = expected.value(QStringLiteral("trainer")).toObject();
        trainer.insert(QStringLiteral("batch_size"), 96);
        trainer.insert(QStringLiteral("precision"), QStringLiteral("fp16"));
        expected.insert(QStringLiteral("trainer"), trainer);
        QVERIFY2(sameJson(expected, readJson(savedPath), QStringLiteral("job"), &difference), qPrintable(difference));
    }

    // Start returns at once and the event loop keeps running while ringmaster-trainer --validate-only
    // takes its time; then the run starts from that pre-flight.
    void preflightRunsOffTheGuiThread()
    {
        const QString trainer = writeStubTrainer(m_root.path(), QStringLiteral("slow-validate.sh"), kStubValidateSeconds,
                                                 "echo 'rank: nothing to train' >&2; exit 1");
        auto job = supervisor::defaultJob(0);
        const TrainerOverride stub(trainer);
        job.outputRoot = m_root.path() + QStringLiteral("/preflight-runs");
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.loadJob(job);
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);

        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, this, [&] { ++ticks; });
        ticker.start(50);
        QElapsedTimer clock;
        clock.start();
        window.startAction()->trigger();
        QVERIFY2(clock.elapsed() < 1000, qPrintable(QStringLiteral("Start blocked for %1 ms").arg(clock.elapsed())));
        QVERIFY(window.isCheckingStart());
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("checking")));
        QVERIFY(!window.startAction()->isEnabled());
        QVERIFY(window.stopAction()->isEnabled()); // cancels
        QTRY_VERIFY_WITH_TIMEOUT(!window.isCheckingStart(), kCheckTimeoutMs);
        QVERIFY2(clock.elapsed() >= kStubValidateSeconds * 1000 - 100, qPrintable(QString::number(clock.elapsed())));
        // The timer kept firing all along (a blocked loop would have coalesced these into one).
        QVERIFY2(ticks >= kStubValidateSeconds * 1000 / 50 / 3, qPrintable(QString::number(ticks)));
        // The pre-flight's result launched the run: the stub ranks exit 1, so it fails.
        QVERIFY(window.supervisor()->state() != supervisor::RunState::Idle);
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kCheckTimeoutMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Failed);
    }

    void stopCancelsAStartThatIsStillChecking()
    {
        const QString trainer = writeStubTrainer(m_root.path(), QStringLiteral("slow-validate-2.sh"), kStubValidateSeconds, "exit 1");
        auto job = supervisor::defaultJob(0);
        const TrainerOverride stub(trainer);
        job.outputRoot = m_root.path() + QStringLiteral("/cancelled-runs");
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.loadJob(job);
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        window.startAction()->trigger();
        QVERIFY(window.isCheckingStart());
        window.stopAction()->trigger();
        QVERIFY(!window.isCheckingStart());
        QVERIFY(window.startAction()->isEnabled());
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("idle")));
        // The pre-flight finishes in the background; its result must not launch anything.
        QTest::qWait((kStubValidateSeconds + 1) * 1000);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Idle);
        QVERIFY(!QFileInfo::exists(job.outputRoot) || QDir(job.outputRoot).isEmpty());
    }

    // The Devices panel names the trainer the app runs and what it was built with (its --version). With GPUs
    // here (the fake NVML) and a trainer without CUDA it says so in one line with the command that builds a
    // GPU trainer, and Start stays off for the GPU job; a trainer with CUDA clears that.
    void trainerNoteNamesTheTrainerAndRefusesGpusWithoutCuda()
    {
        const QString real = qEnvironmentVariable("RINGMASTER_REAL_TRAINER");
        QVERIFY(!real.isEmpty());
        const auto realTrainer = std::make_unique<TrainerOverride>(real);
        auto openWindow = [this](MainWindow& window) {
            window.setConfirmOnClose(false);
            window.show();
            window.jobForm()->outputEdit()->setText(m_root.path());
            QTRY_VERIFY_WITH_TIMEOUT(!window.trainerNote()->isChecking() && window.jobForm()->isValid(), kCheckTimeoutMs);
        };
        {
            MainWindow window;
            openWindow(window);
            const QString text = window.trainerNote()->text();
            QVERIFY2(text.contains(real) && text.contains(QStringLiteral("CPU only")), qPrintable(text));
            QVERIFY(!window.trainerNote()->blocksGpuRuns());
            QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        }
        qputenv("RINGMASTER_NVML_LIBRARY", qgetenv("RINGMASTER_FAKE_NVML"));
        const auto noNvml = qScopeGuard([] { qputenv("RINGMASTER_NVML_LIBRARY", kNoNvml); });
        {
            MainWindow window;
            openWindow(window);
            QVERIFY(window.gpuPanel()->hasGpus());
            const QString text = window.trainerNote()->text();
            QVERIFY2(text.contains(real + QStringLiteral(" has no CUDA")) &&
                         text.contains(QStringLiteral("ringmaster-build-trainer --python PATH")),
                     qPrintable(text));
            QVERIFY(!text.contains(QLatin1Char('\n')));
            QVERIFY(!window.startAction()->isEnabled());
            QVERIFY2(window.startAction()->toolTip().contains(QStringLiteral("has no CUDA")),
                     qPrintable(window.startAction()->toolTip()));
        }
        const QString cuda = writeStubTrainer(m_root.path(), QStringLiteral("cuda-trainer.sh"), 0, "exit 0");
        const TrainerOverride stub(cuda); // restored first: then realTrainer restores the environment as it was
        {
            MainWindow window;
            openWindow(window);
            const QString text = window.trainerNote()->text();
            QVERIFY2(text.contains(QStringLiteral("LibTorch 2.11.0, CUDA 13.0, NCCL 2.28.9")), qPrintable(text));
            QVERIFY(!window.trainerNote()->blocksGpuRuns());
            QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        }
    }

    // A GPU that only this app's own rank uses is not "in use", and Select next free may pick it.
    void ownRanksDoNotMakeAGpuBusy()
    {
        qputenv("RINGMASTER_NVML_LIBRARY", qgetenv("RINGMASTER_FAKE_NVML"));
        qunsetenv("RINGMASTER_FAKE_NVML_PROCESSES");
        const QString trainer = writeStubTrainer(m_root.path(), QStringLiteral("sleeping-rank.sh"), 0, "exec sleep 120");
        auto job = supervisor::defaultJob(0);
        job.device = QStringLiteral("cuda");
        job.gpus = {0};
        job.nproc = 1;
        const TrainerOverride stub(trainer);
        job.outputRoot = m_root.path() + QStringLiteral("/gpu-runs");
        {
            MainWindow window;
            window.setConfirmOnClose(false);
            window.show();
            GpuPanel* panel = window.gpuPanel();
            QVERIFY(panel->hasGpus());
            QVERIFY(panel->isBusy(1)); // the fake's default: another process (pid 4242) on GPU 1
            window.loadJob(job);
            QCOMPARE(panel->selectedGpus(), QList<int>{0});
            QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
            window.startAction()->trigger();
            QTRY_VERIFY_WITH_TIMEOUT(!window.supervisor()->ranks().isEmpty() && window.supervisor()->ranks().at(0).pid > 0, kCheckTimeoutMs);
            const qint64 ownPid = window.supervisor()->ranks().at(0).pid;

            qputenv("RINGMASTER_FAKE_NVML_PROCESSES", QStringLiteral("0:%1,1:4242,3:%2").arg(ownPid).arg(ownPid + 1).toLatin1());
            panel->refresh();
            QVERIFY(!panel->isBusy(0)); // only our rank
            QVERIFY(panel->isBusy(1));
            QVERIFY(!panel->isBusy(2));
            QVERIFY(panel->isBusy(3)); // someone else's pid
            QVERIFY(!panel->table()->item(0, 1)->text().contains(QStringLiteral("in use")));
            QVERIFY(panel->table()->item(3, 1)->text().contains(QStringLiteral("in use")));
            panel->selectNextFree(2);
            QCOMPARE(panel->selectedGpus(), (QList<int>{0, 2}));

            window.supervisor()->kill();
            QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kCheckTimeoutMs);
        }
        qunsetenv("RINGMASTER_FAKE_NVML_PROCESSES");
        qputenv("RINGMASTER_NVML_LIBRARY", kNoNvml);
    }

    // A rank that dies with a C++ exception prints stack frames: the banner shows the reason, not them.
    void failureBannerShowsNoStackFrames()
    {
        const QString trainer = writeStubTrainer(
            m_root.path(), QStringLiteral("throwing-rank.sh"), 0,
            "echo 'loading data' >&2\n"
            "echo \"terminate called after throwing an instance of 'c10::Error'\" >&2\n"
            "echo '  what():  CUDA out of memory' >&2\n"
            "echo 'Exception raised from malloc at ../c10/cuda/CUDACachingAllocator.cpp:913 (most recent call first):' >&2\n"
            "echo 'frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f0 in /usr/lib/libc10.so)' >&2\n"
            "echo 'frame #1: ringmaster::trainer::Trainer::step() + 0x12 (0x55 in ringmaster-trainer)' >&2\n"
            "exit 1");
        auto job = supervisor::defaultJob(0);
        const TrainerOverride stub(trainer);
        job.outputRoot = m_root.path() + QStringLiteral("/failing-runs");
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.loadJob(job);
        QVERIFY(window.jobForm()->isChecking()); // the output folder: --start waits for it
        window.startWhenFormChecked();
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kCheckTimeoutMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Failed);
        // The frames stay in the rank's log, where a developer looks for them.
        QFile rankLog(window.supervisor()->runDir() + QStringLiteral("/logs/rank-0.log"));
        QVERIFY(rankLog.open(QIODevice::ReadOnly));
        QVERIFY(rankLog.readAll().contains("frame #1:"));
        const QString text = window.banner()->text();
        QVERIFY2(text.contains(QStringLiteral("exited with code 1")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("frame #")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("terminate called")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("CUDA out of memory")), qPrintable(text));
        QVERIFY(text.indexOf(QStringLiteral("exited with code 1")) < text.indexOf(QStringLiteral("CUDA out of memory")));
    }
};

QTEST_MAIN(TestWindowChecks)
#include "tst_window_checks.moc"
