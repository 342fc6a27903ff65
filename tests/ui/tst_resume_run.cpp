// Resume from a picked checkpoint, in the app with a real 2-rank CPU run: a 12-step run with a checkpoint
// every 4 steps, then the Runs tab's resumeRequested with the step-4 checkpoint picked in the
// CheckpointPicker: the run continues in the same directory from step 5 (not 13), metrics.csv counts
// 1..12 once, the later checkpoints are set aside, and the Training and All scalars charts hold steps 1..12.
// And the whole way a user goes for a STOPPED run: a real run stopped with Stop (refused by the Runs tab's
// Resume while it runs), then selected in the Runs tab, Actions ▸ Resume from checkpoint…, step 4 picked in
// the picker that opens and Resume pressed: the run continues in the same directory from step 5, past the
// step it had stopped at, until stopped again; metrics.csv counts 1..N once and the chart holds N points.
#include <QAction>
#include <QApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QPushButton>
#include <QTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "ui_test_support.h"
#include "ui/runs/checkpoint_picker.h"
#include "runs/csv_table.h"
#include "ui/panes/gpu_panel.h"
#include "ui/form/job_form.h"
#include "ui/charts/loss_chart.h"
#include "ui/charts/scalar_chart.h"
#include "ui/main_window.h"
#include "ui/runs/run_actions.h"
#include "ui/panes/eval_table.h"
#include "supervisor/run_supervisor.h"
#include "ui/runs/runs_model.h"
#include "ui/runs/runs_panel.h"

using namespace ringmaster;
using namespace ringmaster::ui;

using ringmaster::ui::test::statusOf;

namespace {

constexpr int kRunTimeoutMs = 180000;
constexpr int kCheckTimeoutMs = 60000;

QList<qint64> metricSteps(const QString& runDir, QList<QByteArray>* losses = nullptr)
{
    const auto table = runs::readCsvTable(runDir + QStringLiteral("/metrics.csv"), QStringLiteral("metrics.csv"));
    QList<qint64> steps;
    for (const auto& row : table.rows) {
        steps.append(row.value(table.column("step")).toLongLong());
        if (losses) losses->append(row.value(table.column("loss")));
    }
    return steps;
}

// Answers the next CheckpointPicker: puts the steps it lists in *listed, picks STEP and presses Resume.
std::shared_ptr<QList<qint64>> pickWhenAsked(qint64 step)
{
    auto listed = std::make_shared<QList<qint64>>();
    auto* timer = new QTimer;
    QObject::connect(timer, &QTimer::timeout, [timer, listed, step] {
        auto* picker = qobject_cast<CheckpointPicker*>(QApplication::activeModalWidget());
        if (!picker) return;
        for (const auto& checkpoint : picker->checkpoints()) listed->append(checkpoint.step);
        if (picker->selectStep(step)) picker->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok)->click();
        else picker->reject();
        timer->stop();
        timer->deleteLater();
    });
    timer->start(20);
    return listed;
}

} // namespace

class TestResumeRun : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"); // CPU ranks, even on a GPU box
        QVERIFY(!qEnvironmentVariable("RINGMASTER_TRAINER").isEmpty());
    }

    void resumeFromAPickedCheckpointContinuesTheStepsAndTheChart()
    {
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        auto job = window.currentJob();
        job.outputRoot = m_root.path();
        job.setTrainerOption(QStringLiteral("epochs"), 1);
        job.setTrainerOption(QStringLiteral("max-steps"), 12);
        job.setTrainerOption(QStringLiteral("batch-size"), 64);
        job.setTrainerOption(QStringLiteral("checkpoint-every"), 4);
        job.setTrainerOption(QStringLiteral("keep-checkpoints"), 5);
        window.loadJob(job);
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        window.startAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return supervisor::isFinal(window.supervisor()->state()); }, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        const QString dir = window.supervisor()->runDir();
        QList<QByteArray> firstLosses;
        QCOMPARE(metricSteps(dir, &firstLosses), (QList<qint64>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));

        // The picker lists the three checkpoints; the earliest is picked.
        CheckpointPicker picker(dir, CheckpointPicker::Purpose::Resume);
        QCOMPARE(picker.checkpoints().size(), 3);
        QCOMPARE(picker.checkpoints().at(0).step, qint64(4));
        QCOMPARE(picker.checkpoints().at(0).loss.value_or(-1), firstLosses.at(3).toDouble());
        // One evaluation, at the end: step 12's checkpoint is the best (--keep-best auto), and marked so.
        QVERIFY(!picker.checkpoints().at(0).best && picker.checkpoints().at(2).best);
        QCOMPARE(picker.checkpoints().at(2).bestMetric, QStringLiteral("val_loss"));
        QVERIFY(picker.findChild<QTableWidget*>()->item(2, 0)->text().contains(QStringLiteral("best")));
        if (const QString shots = qEnvironmentVariable("RINGMASTER_SCREENSHOT_DIR"); !shots.isEmpty()) {
            picker.show();
            picker.grab().save(shots + QStringLiteral("/checkpoint-picker.png"));
        }
        QVERIFY(picker.selectStep(4));
        const QString checkpoint = picker.selectedCheckpoint();

        QList<qint64> received;
        connect(window.supervisor(), &supervisor::RunSupervisor::stepReceived, this,
                [&](const supervisor::StepMetric& metric) { received.append(metric.step); });
        QSignalSpy started(window.supervisor(), &supervisor::RunSupervisor::trainingStarted);
        Q_EMIT window.runsPanel()->actions()->resumeRequested(dir, checkpoint);
        QVERIFY(window.isCheckingStart());
        QVERIFY(QTest::qWaitFor([&] { return !started.isEmpty(); }, kRunTimeoutMs));
        QVERIFY(QTest::qWaitFor([&] { return supervisor::isFinal(window.supervisor()->state()); }, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        QCOMPARE(window.supervisor()->runDir(), dir);                 // the same run directory
        QCOMPARE(started.first().first().toLongLong(), qint64(4));    // from the picked checkpoint's step
        QVERIFY(!received.isEmpty());
        QCOMPARE(received.first(), qint64(5));
        QCOMPARE(received.last(), qint64(12));

        QList<QByteArray> losses;
        QCOMPARE(metricSteps(dir, &losses), (QList<qint64>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}));
        QCOMPARE(losses.mid(0, 4), firstLosses.mid(0, 4));          // the rows up to the checkpoint are kept
        QFile summaryFile(dir + QStringLiteral("/summary.json"));
        QVERIFY(summaryFile.open(QIODevice::ReadOnly));
        const auto summary = QJsonDocument::fromJson(summaryFile.readAll()).object();
        QCOMPARE(summary.value(QStringLiteral("steps")).toInt(), 12);
        QVERIFY(summary.value(QStringLiteral("resumed_from")).toString().endsWith(QStringLiteral("step-00000004.pt")));
        QCOMPARE(QDir(dir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("abandoned-*")}, QDir::Dirs).size(), 1);

        // The chart continues: steps 1..4 from the run's files, 5..12 from the resumed ranks.
        QCOMPARE(window.chart()->lossPointCount(), 12);
        // So does the All scalars chart: loss at steps 1..4 from scalars.csv (its last row per step), 5..12 live.
        QCOMPARE(window.scalarChart()->pointCount(QStringLiteral("loss")), 12);
        QCOMPARE(window.evalTable()->rowCount(), static_cast<int>(runs::readCsvTable(dir + QStringLiteral("/eval.csv"), QStringLiteral("eval.csv")).rows.size()));
        // The form is not left resuming: the next Start is a new run.
        QVERIFY(window.currentJob().resume.isEmpty());

        // New job from this run: the form takes the run's job (not its resume target).
        window.jobForm()->maxStepsBox()->setValue(3);
        Q_EMIT window.runsPanel()->actions()->newJobRequested(dir);
        QCOMPARE(window.jobForm()->maxStepsBox()->value(), 12);
        QVERIFY(window.currentJob().resume.isEmpty());
        QVERIFY(window.currentJob().runDir.isEmpty());
    }

    void resumeAStoppedRunThroughTheRunsTabsAction()
    {
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        auto job = window.currentJob();
        job.outputRoot = m_root.path() + QStringLiteral("/stopped");
        QVERIFY(QDir().mkpath(job.outputRoot));
        job.setTrainerOption(QStringLiteral("epochs"), 20);   // far more than it runs: it is stopped
        job.setTrainerOption(QStringLiteral("max-steps"), 0);
        job.setTrainerOption(QStringLiteral("batch-size"), 64);
        job.setTrainerOption(QStringLiteral("checkpoint-every"), 4);
        job.setTrainerOption(QStringLiteral("keep-checkpoints"), 1000);
        window.loadJob(job);
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        window.startAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return window.supervisor()->stepsReceived() >= 6; }, kRunTimeoutMs));
        const QString dir = QDir::cleanPath(QDir(window.supervisor()->runDir()).absolutePath());
        RunsPanel* panel = window.runsPanel();
        RunActions* actions = panel->actions();

        // While it runs, the Runs tab's Resume refuses it.
        QVERIFY(QTest::qWaitFor([&] { return statusOf(*panel, dir) == QStringLiteral("running"); }, kCheckTimeoutMs));
        panel->selectRuns({dir});
        actions->updateMenu();
        QVERIFY(!actions->resumeAction()->isEnabled());
        QVERIFY2(actions->resumeAction()->toolTip().contains(QStringLiteral("running now")), qPrintable(actions->resumeAction()->toolTip()));

        window.stopAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return supervisor::isFinal(window.supervisor()->state()); }, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QFile firstSummary(dir + QStringLiteral("/summary.json"));
        QVERIFY(firstSummary.open(QIODevice::ReadOnly));
        const qint64 stoppedAt = QJsonDocument::fromJson(firstSummary.readAll()).object().value(QStringLiteral("steps")).toInteger();
        QVERIFY(stoppedAt >= 6);
        QCOMPARE(metricSteps(dir).size(), stoppedAt);

        // The Runs tab lists it as stopped; Actions ▸ Resume from checkpoint… opens the picker, step 4 is picked.
        window.tabs()->setCurrentWidget(panel);
        QVERIFY(QTest::qWaitFor([&] { return statusOf(*panel, dir) == QStringLiteral("stopped"); }, kCheckTimeoutMs));
        panel->selectRuns({dir});
        actions->updateMenu();
        QVERIFY2(actions->resumeAction()->isEnabled(), qPrintable(actions->resumeAction()->toolTip()));
        QList<qint64> received;
        connect(window.supervisor(), &supervisor::RunSupervisor::stepReceived, this,
                [&](const supervisor::StepMetric& metric) { received.append(metric.step); });
        QSignalSpy started(window.supervisor(), &supervisor::RunSupervisor::trainingStarted);
        const auto listed = pickWhenAsked(4);
        actions->resumeAction()->trigger();
        QVERIFY(listed->contains(4));
        QVERIFY(listed->contains(stoppedAt));   // the final checkpoint the stop wrote is offered too
        QVERIFY(window.isCheckingStart());
        QVERIFY(QTest::qWaitFor([&] { return !started.isEmpty(); }, kRunTimeoutMs));
        QCOMPARE(started.first().first().toLongLong(), qint64(4));
        QCOMPARE(QDir::cleanPath(QDir(window.supervisor()->runDir()).absolutePath()), dir);   // the same run directory
        // It goes on past the step it had stopped at; then it is stopped again.
        QVERIFY(QTest::qWaitFor([&] { return !received.isEmpty() && received.last() > stoppedAt + 2; }, kRunTimeoutMs));
        window.stopAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return supervisor::isFinal(window.supervisor()->state()); }, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QCOMPARE(received.first(), qint64(5));

        QFile summaryFile(dir + QStringLiteral("/summary.json"));
        QVERIFY(summaryFile.open(QIODevice::ReadOnly));
        const auto summary = QJsonDocument::fromJson(summaryFile.readAll()).object();
        const qint64 last = summary.value(QStringLiteral("steps")).toInteger();
        QVERIFY(last > stoppedAt + 2);
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        QVERIFY(summary.value(QStringLiteral("resumed_from")).toString().endsWith(QStringLiteral("step-00000004.pt")));
        QList<qint64> expected;
        for (qint64 step = 1; step <= last; ++step) expected << step;
        QCOMPARE(metricSteps(dir), expected);   // one timeline: 1..4 kept, 5..last from the resumed ranks
        QCOMPARE(QDir(dir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("abandoned-*")}, QDir::Dirs).size(), 1);
        // The chart continues: 1..4 from the run's files, 5..last live.
        QCOMPARE(window.chart()->lossPointCount(), static_cast<int>(last));
        // And the Runs tab shows the run's new end.
        QVERIFY(QTest::qWaitFor([&] { return statusOf(*panel, dir, RunsModel::Steps) == QString::number(last); }, kCheckTimeoutMs));
        QCOMPARE(statusOf(*panel, dir), QStringLiteral("stopped"));
    }
};

QTEST_MAIN(TestResumeRun)
#include "tst_resume_run.moc"
