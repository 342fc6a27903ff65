// Resume from a picked checkpoint, in the app with a real 2-rank CPU run: a 12-step run with a checkpoint
// every 4 steps, then the Runs tab's resumeRequested with the step-4 checkpoint picked in the
// CheckpointPicker: the run continues in the same directory from step 5 (not 13), metrics.csv counts
// 1..12 once, the later checkpoints are set aside, and the Training and All scalars charts hold steps 1..12.
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "checkpoint_picker.h"
#include "csv_table.h"
#include "gpu_panel.h"
#include "job_form.h"
#include "loss_chart.h"
#include "scalar_chart.h"
#include "main_window.h"
#include "run_actions.h"
#include "run_supervisor.h"
#include "runs_panel.h"

using namespace ringmaster;
using namespace ringmaster::ui;

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
        // The form is not left resuming: the next Start is a new run.
        QVERIFY(window.currentJob().resume.isEmpty());

        // New job from this run: the form takes the run's job (not its resume target).
        window.jobForm()->maxStepsBox()->setValue(3);
        Q_EMIT window.runsPanel()->actions()->newJobRequested(dir);
        QCOMPARE(window.jobForm()->maxStepsBox()->value(), 12);
        QVERIFY(window.currentJob().resume.isEmpty());
        QVERIFY(window.currentJob().runDir.isEmpty());
    }
};

QTEST_MAIN(TestResumeRun)
#include "tst_resume_run.moc"
