// The desktop app with real widgets (offscreen) and real 2-rank CPU runs: form to chart to files.
// With RINGMASTER_SCREENSHOT_DIR set, it also saves idle / mid-run / failure screenshots.
#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "ui_test_support.h"
#include "ui/panes/gpu_panel.h"
#include "ui/form/job_form.h"
#include "ui/panes/log_panel.h"
#include "ui/charts/loss_chart.h"
#include "ui/main_window.h"
#include "ui/panes/rank_table.h"
#include "supervisor/run_supervisor.h"
#include "ui/charts/scalar_chart.h"
#include "ui/charts/system_panel.h"
#include "ui/form/script_fields.h"

using namespace ringmaster;
using namespace ringmaster::ui;

using ringmaster::ui::test::screenshot;
using ringmaster::ui::test::waitForFinal;

namespace {

constexpr int kRunTimeoutMs = 180000;
constexpr int kCheckTimeoutMs = 60000; // the output-folder check and pre-flight run off the GUI thread

QString readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

int csvRows(const QString& path)
{
    return static_cast<int>(readAll(path).split(QLatin1Char('\n'), Qt::SkipEmptyParts).size()) - 1;
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;

    // A window on CPU ranks, output into the test's folder, filled in through its widgets.
    void prepare(MainWindow& window, int maxSteps, int epochs = 1)
    {
        window.setConfirmOnClose(false);
        window.show();
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        window.jobForm()->maxStepsBox()->setValue(maxSteps);
        window.jobForm()->findChildren<QSpinBox*>().first()->setValue(epochs); // the form's first spin box: epochs
        window.jobForm()->outputEdit()->setText(m_root.path());
        window.jobForm()->batchSizeBox()->setValue(64);
        // The output folder is checked off the GUI thread: Start waits for that check.
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"); // CPU ranks, even on a GPU box
        QVERIFY(!qEnvironmentVariable("RINGMASTER_TRAINER").isEmpty());
    }

    void formToChartToFiles()
    {
        MainWindow window;
        prepare(window, 40);
        // The real trainer's --probe describes the embedded default under the model and data rows.
        QTRY_VERIFY_WITH_TIMEOUT(!window.jobForm()->isProbing(), kCheckTimeoutMs);
        QVERIFY2(window.jobForm()->probeOutcome().answered(), qPrintable(window.jobForm()->probeOutcome().message));
        QCOMPARE(window.jobForm()->probeOutcome().trainSamples(), qint64(60000));
        screenshot(window, "idle.png");
        QVERIFY(window.startAction()->isEnabled());
        window.startAction()->trigger();
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("checking"))); // pre-flight on a worker thread
        QTRY_VERIFY_WITH_TIMEOUT(window.stateLabel()->text().contains(QStringLiteral("starting")) ||
                                     window.stateLabel()->text().contains(QStringLiteral("running")),
                                 kCheckTimeoutMs);
        QVERIFY(QTest::qWaitFor([&] { return window.chart()->lossPointCount() >= 20 || supervisor::isFinal(window.supervisor()->state()); },
                                kRunTimeoutMs));
        QVERIFY(!window.startAction()->isEnabled()); // no second run while one is active
        QVERIFY(waitForFinal(window, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("completed")));

        const QString dir = window.supervisor()->runDir();
        QCOMPARE(window.chart()->lossPointCount(), csvRows(dir + QStringLiteral("/metrics.csv")));
        QCOMPARE(window.chart()->lossPointCount(), 40);
        QCOMPARE(window.chart()->smoothedPointCount(), 40);
        QCOMPARE(window.chart()->evalPointCount(), csvRows(dir + QStringLiteral("/eval.csv")));
        for (int rank = 0; rank < 2; ++rank) {
            QCOMPARE(window.rankTable()->cell(rank, RankTable::kState), QStringLiteral("exited"));
            QCOMPARE(window.rankTable()->cell(rank, RankTable::kExit), QStringLiteral("0"));
        }
        QVERIFY(window.logPanel()->lines(0).join(QLatin1Char('\n')).contains(QStringLiteral("metric step=40")));
        QVERIFY(window.logPanel()->lines(1).join(QLatin1Char('\n')).contains(QStringLiteral("rank 1/2")));
        QVERIFY(window.logPanel()->lines(-1).join(QLatin1Char('\n')).contains(QStringLiteral("state: completed")));
        // The "All scalars" tab lists every scalar the trainer reported, with loss ticked and drawn.
        QCOMPARE(window.tabs()->tabText(0), QStringLiteral("Training"));
        QCOMPARE(window.tabs()->tabText(1), QStringLiteral("All scalars"));
        ScalarChart* scalars = window.scalarChart();
        QCOMPARE(scalars->names(), (QStringList{QStringLiteral("epoch"), QStringLiteral("loss"), QStringLiteral("lr"),
                                                QStringLiteral("samples_per_sec"), QStringLiteral("val_accuracy"), QStringLiteral("val_loss")}));
        QVERIFY(scalars->isTicked(QStringLiteral("loss")));
        QCOMPARE(scalars->drawnPointCount(QStringLiteral("loss")), 40);
        QCOMPARE(scalars->pointCount(QStringLiteral("val_loss")), window.chart()->evalPointCount());
        QCOMPARE(scalars->panelTitles(), QStringList{QStringLiteral("scalars")});
        // Every axis mode keeps every point.
        window.chart()->setXAxis(LossChart::XAxis::WallTime);
        QCOMPARE(window.chart()->lossPointCount(), 40);
        window.chart()->setXAxis(LossChart::XAxis::Epoch);
        QCOMPARE(window.chart()->lossPointCount(), 40);
    }

    void scriptRunShowsItsScalars()
    {
        // The user's own script from the form's "Your script" kind: its printed scalars reach the All
        // scalars tab, which is shown for a script run, grouped by prefix.
        const QString script = m_root.filePath(QStringLiteral("train.py"));
        QFile file(script);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("import os\nfor step in range(15):\n"
                   "    if os.environ['RANK'] == '0':\n"
                   "        print('step %d train/loss=%.4f val/acc=%.2f' % (step, 1.0 / (step + 1), step / 15))\n");
        file.close();
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        window.jobForm()->outputEdit()->setText(m_root.path());
        window.jobForm()->kindBox()->setCurrentIndex(1);
        window.jobForm()->scriptFields()->scriptEdit()->setText(script);
        window.jobForm()->scriptFields()->pythonEdit()->setText(QStringLiteral("/usr/bin/python3"));
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kRunTimeoutMs); // the interpreter imports torch
        window.tabs()->setCurrentIndex(0);
        window.startAction()->trigger();
        QVERIFY(waitForFinal(window, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        QCOMPARE(window.tabs()->currentIndex(), 1);
        QVERIFY(!window.findChild<QProgressBar*>()->isVisible()); // no "step 0 / 100" for a script's unknown total
        ScalarChart* scalars = window.scalarChart();
        QCOMPARE(scalars->names(), (QStringList{QStringLiteral("train/loss"), QStringLiteral("val/acc")}));
        QCOMPARE(scalars->pointCount(QStringLiteral("train/loss")), 15);
        QVERIFY(scalars->isTicked(QStringLiteral("train/loss"))); // no "loss": the first name to arrive
        scalars->setTicked(QStringLiteral("val/acc"), true);
        QCOMPARE(scalars->panelTitles(), (QStringList{QStringLiteral("train"), QStringLiteral("val")}));
        QCOMPARE(csvRows(window.supervisor()->runDir() + QStringLiteral("/scalars.csv")), 30);
        scalars->flush();
        QCoreApplication::processEvents(); // the queued replot of the new panels
        screenshot(window, "script.png");
    }

    // A script that logs with torch's real SummaryWriter (RINGMASTER_FRAMEWORK_PYTHON: the pinned torch 2.11 and
    // tensorboard of scripts/torch-env.lock) is followed live: its first 500 steps are in the All scalars tab
    // while it still runs (it waits for the test's go), then all 1,000.
    void realSummaryWriterIsFollowedLive()
    {
        const QString python = qEnvironmentVariable("RINGMASTER_FRAMEWORK_PYTHON");
        if (python.isEmpty()) QSKIP("RINGMASTER_FRAMEWORK_PYTHON is not set (scripts/test.sh sets it to .torch-env/bin/python)");
        const QString go = m_root.filePath(QStringLiteral("go-writer"));
        const QString script = m_root.filePath(QStringLiteral("writer.py"));
        QFile file(script);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("import os, sys, time\n"
                   "from torch.utils.tensorboard import SummaryWriter\n"
                   "if os.environ['RANK'] != '0':\n    sys.exit(0)\n"
                   "writer = SummaryWriter(os.path.join(os.environ['RINGMASTER_RUN_DIR'], 'tb'))\n"
                   "for step in range(1000):\n"
                   "    if step == 500:\n"
                   "        writer.flush()\n"
                   "        while not os.path.exists(sys.argv[1]):\n            time.sleep(0.05)\n"
                   "    writer.add_scalar('train/loss', 1.0 / (step + 1), step)\n"
                   "    writer.add_scalar('train/acc', step / 1000, step)\n"
                   "writer.close()\n");
        file.close();
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.gpuPanel()->cpuRanksBox()->setValue(1);
        window.jobForm()->outputEdit()->setText(m_root.path());
        window.jobForm()->kindBox()->setCurrentIndex(1);
        window.jobForm()->scriptFields()->scriptEdit()->setText(script);
        window.jobForm()->scriptFields()->argumentsEdit()->setText(go);
        window.jobForm()->scriptFields()->pythonEdit()->setText(python);
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kRunTimeoutMs); // the interpreter imports torch
        window.startAction()->trigger();
        ScalarChart* scalars = window.scalarChart();
        QVERIFY(QTest::qWaitFor([&] { return scalars->pointCount(QStringLiteral("train/loss")) >= 500 || supervisor::isFinal(window.supervisor()->state()); },
                                kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Running); // live, not at the end
        QCOMPARE(scalars->pointCount(QStringLiteral("train/loss")), 500);
        QCOMPARE(scalars->names(), (QStringList{QStringLiteral("train/acc"), QStringLiteral("train/loss")}));
        QCOMPARE(window.tabs()->currentIndex(), 1); // a script run shows the All scalars tab
        scalars->setTicked(QStringLiteral("train/acc"), true);
        scalars->flush();
        QCoreApplication::processEvents();
        screenshot(window, "real-writer-live.png");
        QVERIFY(QFile(go).open(QIODevice::WriteOnly));
        QVERIFY(waitForFinal(window, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        QCOMPARE(scalars->pointCount(QStringLiteral("train/loss")), 1000);
        QCOMPARE(scalars->pointCount(QStringLiteral("train/acc")), 1000);
    }

    void invalidInputKeepsStartDisabled()
    {
        MainWindow window;
        prepare(window, 10);
        QVERIFY(window.startAction()->isEnabled());

        window.jobForm()->batchSizeBox()->setValue(0);
        QVERIFY(!window.startAction()->isEnabled());
        QVERIFY(window.jobForm()->problems().join(QLatin1Char(' ')).contains(QStringLiteral("Batch per rank must be at least 1")));
        window.jobForm()->batchSizeBox()->setValue(32);
        QVERIFY(window.startAction()->isEnabled());
        QCOMPARE(window.jobForm()->globalBatchLabel()->text(), QStringLiteral("global 64 (32 × 2 ranks)"));

        window.gpuPanel()->cpuRanksBox()->setValue(0);
        QVERIFY(!window.startAction()->isEnabled());
        QVERIFY(window.jobForm()->problems().join(QLatin1Char(' ')).contains(QStringLiteral("No ranks")));
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        QVERIFY(window.startAction()->isEnabled());

        window.jobForm()->outputEdit()->setText(QStringLiteral("/proc/ringmaster-cannot-write-here"));
        QVERIFY(!window.startAction()->isEnabled()); // at once: the check for this text is pending
        QTRY_VERIFY_WITH_TIMEOUT(window.jobForm()->problems().join(QLatin1Char(' ')).contains(QStringLiteral("not writable")),
                                 kCheckTimeoutMs);
        QVERIFY(!window.startAction()->isEnabled());
        QVERIFY(window.startAction()->toolTip().contains(QStringLiteral("not writable")));
    }

    void stopMidRunEndsStoppedWithCheckpoint()
    {
        MainWindow window;
        prepare(window, 0, 20);
        window.startAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return window.supervisor()->stepsReceived() >= 5; }, kRunTimeoutMs));
        QVERIFY(window.stopAction()->isEnabled());
        window.stopAction()->trigger();
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("stopping")));
        QVERIFY(waitForFinal(window, 60000));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("stopped")));
        const QString dir = window.supervisor()->runDir();
        const auto summary = QJsonDocument::fromJson(readAll(dir + QStringLiteral("/summary.json")).toUtf8()).object();
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        const int steps = summary.value(QStringLiteral("steps")).toInt();
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/checkpoints/step-%1.pt").arg(steps, 8, 10, QLatin1Char('0'))));
    }

    void aSlowRankIsNamedInTheRanksTabAndTheLog()
    {
        // The trainer's test hook: rank 1 sleeps 30 ms in each step's compute; its peer waits for it.
        qputenv("RINGMASTER_TEST_SLOW_RANK", "1:30");
        MainWindow window;
        prepare(window, 0, 20);
        QVERIFY(window.jobForm()->stragglerAfterBox()->isVisible());
        QCOMPARE(window.jobForm()->stragglerAfterBox()->value(), supervisor::kDefaultStragglerAfterSec);
        window.jobForm()->stragglerAfterBox()->setValue(2);
        window.startAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return window.rankTable()->cell(1, RankTable::kState) == QStringLiteral("straggler") ||
                                             supervisor::isFinal(window.supervisor()->state()); },
                                kRunTimeoutMs));
        qunsetenv("RINGMASTER_TEST_SLOW_RANK"); // the next tests' ranks must not have it
        QVERIFY2(window.rankTable()->cell(1, RankTable::kState) == QStringLiteral("straggler"),
                 qPrintable(window.logPanel()->lines(-1).join(QLatin1Char('\n'))));
        QCOMPARE(window.rankTable()->cell(0, RankTable::kState), QStringLiteral("running"));
        QVERIFY(window.rankTable()->isShownSlowest(1));
        QVERIFY(!window.rankTable()->isShownSlowest(0));
        // Rank 1 computes the 30 ms it sleeps; rank 0 spends about as long waiting for it.
        QVERIFY2(window.rankTable()->cell(1, RankTable::kComputeMs).toDouble() >= 30.0, qPrintable(window.rankTable()->cell(1, RankTable::kComputeMs)));
        QVERIFY2(window.rankTable()->cell(0, RankTable::kWaitMs).toDouble() >= 20.0, qPrintable(window.rankTable()->cell(0, RankTable::kWaitMs)));
        QVERIFY(window.rankTable()->cell(0, RankTable::kComputeMs).toDouble() < window.rankTable()->cell(1, RankTable::kComputeMs).toDouble());
        const QString log = window.logPanel()->lines(-1).join(QLatin1Char('\n'));
        QVERIFY2(log.contains(QStringLiteral("straggler: rank 1 computes ")), qPrintable(log));
        QVERIFY(!log.contains(QStringLiteral("straggler: rank 0")));
        window.tabs()->setCurrentWidget(window.rankTable());
        screenshot(window, "straggler.png");
        // What the ranks used, live, under All scalars: a line per rank, the band across them.
        QTRY_VERIFY_WITH_TIMEOUT(window.systemPanel()->metrics().contains(QStringLiteral("cpu_percent")), kRunTimeoutMs);
        window.systemPanel()->setMetric(QStringLiteral("cpu_percent"));
        window.systemPanel()->flush();
        QCOMPARE(window.systemPanel()->drawnRanks(), 2);
        QVERIFY(window.systemPanel()->drawnPoints(1) >= 1);
        QVERIFY(window.systemPanel()->bandPoints() >= 1);
        window.tabs()->setCurrentIndex(1);
        screenshot(window, "system.png");
        window.stopAction()->trigger();
        QVERIFY(waitForFinal(window, 60000));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
    }

    void killedRankShowsTheFailureBanner()
    {
        MainWindow window;
        prepare(window, 0, 20);
        window.startAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return window.supervisor()->stepsReceived() >= 20; }, kRunTimeoutMs));
        QTest::qWait(300); // let the chart drain and the rank table refresh once, for the screenshot
        screenshot(window, "mid-run.png");
        const qint64 pid = window.supervisor()->ranks().at(1).pid;
        QCOMPARE(::kill(static_cast<pid_t>(pid), SIGKILL), 0);
        QVERIFY(waitForFinal(window, 15000));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Failed);
        QVERIFY(window.banner()->isVisible());
        const QString text = window.banner()->text();
        QVERIFY2(text.contains(QStringLiteral("rank 1 killed by signal 9 (SIGKILL)")), qPrintable(text));
        QVERIFY(text.contains(QStringLiteral("rank:1")));
        QCOMPARE(window.rankTable()->cell(1, RankTable::kExit), QStringLiteral("SIGKILL"));
        window.tabs()->setCurrentIndex(0);
        screenshot(window, "failure.png");
        Q_EMIT window.banner()->linkActivated(QStringLiteral("rank:1"));
        QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.logPanel()));
    }

    void restartDropsTheStepsItReplays()
    {
        LossChart chart;
        auto step = [](qint64 n, double loss) {
            supervisor::StepMetric m;
            m.step = n;
            m.loss = loss;
            m.lr = 0.01;
            return m;
        };
        for (qint64 n = 1; n <= 37; ++n) chart.append(step(n, 1.0));
        supervisor::EvalMetric eval;
        eval.step = 30;
        chart.appendEval(eval);
        chart.flush();
        QCOMPARE(chart.lossPointCount(), 37);
        chart.truncateAfter(20); // the restart resumed from the step-20 checkpoint
        QCOMPARE(chart.lossPointCount(), 20);
        QCOMPARE(chart.smoothedPointCount(), 20);
        QCOMPARE(chart.evalPointCount(), 0);
        for (qint64 n = 21; n <= 40; ++n) chart.append(step(n, 0.5));
        chart.flush();
        QCOMPARE(chart.lossPointCount(), 40); // one point per step, as in metrics.csv
        chart.truncateAfter(0); // a fresh start forgets nothing that is not there
        QCOMPARE(chart.lossPointCount(), 0);
    }

    // The CUDA build's trainer (built by scripts/build-trainer.sh into build-cuda; scripts/test.sh passes it as
    // RINGMASTER_CUDA_TRAINER), chosen once, then named by a job file's trainer_path and run from the window on CPU ranks: the
    // Devices panel names the app's own trainer, the run completes with the CUDA build's LibTorch.
    void cudaTrainerFromAJobFileRunsOnCpuRanks()
    {
        const QString cuda = qEnvironmentVariable("RINGMASTER_CUDA_TRAINER");
        if (cuda.isEmpty()) QSKIP("RINGMASTER_CUDA_TRAINER is not set (scripts/test.sh sets it to build-cuda's trainer)");
        QTemporaryDir dir;
        const QString jobPath = dir.filePath(QStringLiteral("cuda.ringmaster.json"));
        QFile file(jobPath);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QJsonDocument(QJsonObject{
                       {QStringLiteral("version"), 1},
                       {QStringLiteral("launch"), QJsonObject{{QStringLiteral("device"), QStringLiteral("cpu")},
                                                              {QStringLiteral("nproc"), 2},
                                                              {QStringLiteral("trainer_path"), cuda},
                                                              {QStringLiteral("output_root"), dir.path()}}},
                       {QStringLiteral("trainer"), QJsonObject{{QStringLiteral("max_steps"), 12},
                                                               {QStringLiteral("threads"), 1},
                                                               {QStringLiteral("eval_batch_size"), 5000}}}})
                       .toJson());
        file.close();
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        // A job file may name only a trainer the user runs or chose: chosen here as "Choose trainer…" does.
        window.useTrainer(cuda);
        QString error;
        QVERIFY2(window.openJobFile(jobPath, &error), qPrintable(error));
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        QVERIFY(window.startRun());
        QVERIFY(waitForFinal(window, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        const QString run = window.supervisor()->runDir();
        const auto summary = QJsonDocument::fromJson(readAll(run + QStringLiteral("/summary.json")).toUtf8()).object();
        QVERIFY2(summary.value(QStringLiteral("libtorch_version")).toString().startsWith(QStringLiteral("2.")),
                 qPrintable(readAll(run + QStringLiteral("/summary.json"))));
        QVERIFY(!summary.value(QStringLiteral("cuda_version")).toString().isEmpty());
        const auto commands = QJsonDocument::fromJson(readAll(run + QStringLiteral("/commands.json")).toUtf8()).object();
        const auto ranks = commands.value(QStringLiteral("ranks")).toArray();
        QCOMPARE(ranks.size(), 2);
        QCOMPARE(ranks.at(0).toObject().value(QStringLiteral("program")).toString(), QFileInfo(cuda).absoluteFilePath());
        QCOMPARE(csvRows(run + QStringLiteral("/metrics.csv")), 12);
    }

    void fakeNvmlListsGpusAndSelectionMakesTheJob()
    {
        qputenv("RINGMASTER_NVML_LIBRARY", qgetenv("RINGMASTER_FAKE_NVML"));
        MainWindow window;
        qputenv("RINGMASTER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
        window.setConfirmOnClose(false);
        GpuPanel* panel = window.gpuPanel();
        QVERIFY(panel->hasGpus());
        QCOMPARE(panel->table()->rowCount(), 4);
        QCOMPARE(panel->table()->item(2, 1)->text(), QStringLiteral("Fake GPU 2"));
        QVERIFY(panel->table()->item(1, 1)->text().contains(QStringLiteral("in use")));
        QCOMPARE(panel->table()->item(3, 2)->text(), QStringLiteral("4.0 / 80.0 GiB"));
        QCOMPARE(panel->selectedGpus(), (QList<int>{0, 2, 3})); // every free GPU by default
        panel->setSelectedGpus({0, 2});
        const auto job = window.currentJob();
        QCOMPARE(job.device, QStringLiteral("cuda"));
        QCOMPARE(job.gpus, (QList<int>{0, 2}));
        QCOMPARE(job.worldSize(), 2);
        QCOMPARE(window.jobForm()->globalBatchLabel()->text(), QStringLiteral("global 128 (64 × 2 ranks)"));
        window.show();
        screenshot(window, "gpus.png");
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
