// The evaluation table (ui/panes/eval_table.h): live in the main window during a real 2-rank CPU run (an mlp on a
// small CSV with a validation split, five epochs: five evaluations), row for row equal to the run's eval.csv
// with each wall time equal to metrics.csv's at that step; the same run opened in the Runs tab shows the same
// rows from its files; a past run made by hand (tests/support/run_fixture.h) shows its eval.csv rows, best
// accuracy and wall times; a restart drops the later rows; a model without accuracy shows a dash.
// With RINGMASTER_SCREENSHOT_DIR set, it saves eval-table.png (the main window's Evaluation tab after the
// run) and runs-tab-past-run.png (the Runs tab with a past run opened, on its Evaluation tab).
#include <QAction>
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "ui_test_support.h"
#include "runs/csv_table.h"
#include "ui/panes/eval_table.h"
#include "ui/panes/gpu_panel.h"
#include "ui/main_window.h"
#include "run_fixture.h"
#include "supervisor/run_supervisor.h"
#include "ui/runs/runs_panel.h"

using namespace ringmaster;
using namespace ringmaster::ui;
using runs::test::makeTrainerRun;
using runs::test::writeFile;

using ringmaster::ui::test::screenshot;

namespace {

constexpr int kRunTimeoutMs = 180000;
constexpr int kCheckTimeoutMs = 60000;
constexpr int kEpochs = 5;

// 240 rows of 4 features and a named class (a simple rule the mlp can learn).
QString writeDataset(const QString& dir)
{
    QByteArray csv = "a,b,c,d,kind\n";
    for (int i = 0; i < 240; ++i) {
        const double a = std::sin(i * 0.37), b = std::cos(i * 0.91), c = std::sin(i * 1.3 + 0.5), d = (i % 7) / 7.0;
        const char* kind = a + b > 0.3 ? "high" : (a - c > 0.0 ? "mid" : "low");
        csv += QByteArray::number(a, 'f', 4) + ',' + QByteArray::number(b, 'f', 4) + ',' + QByteArray::number(c, 'f', 4) + ',' +
               QByteArray::number(d, 'f', 4) + ',' + kind + '\n';
    }
    const QString path = dir + QStringLiteral("/kinds.csv");
    writeFile(path, csv);
    return path;
}

int csvRows(const QString& path)
{
    return static_cast<int>(runs::readCsvTable(path, QFileInfo(path).fileName()).rows.size());
}

bool approximately(double a, double b, double tolerance)
{
    return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= tolerance * std::max(1.0, std::fabs(b));
}

} // namespace

class TestEvalTable : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");   // CPU ranks, even on a GPU box
        QVERIFY(!qEnvironmentVariable("RINGMASTER_TRAINER").isEmpty());
    }

    void liveTableEqualsTheRunsFilesAndTheRunsTab()
    {
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        auto job = window.currentJob();
        job.outputRoot = m_root.path();
        job.setTrainerOption(QStringLiteral("data"), writeDataset(m_root.path()));
        job.setTrainerOption(QStringLiteral("model"), QStringLiteral("mlp"));
        job.setTrainerOption(QStringLiteral("val-split"), 0.25);
        job.setTrainerOption(QStringLiteral("epochs"), kEpochs);
        job.setTrainerOption(QStringLiteral("max-steps"), 0);
        job.setTrainerOption(QStringLiteral("batch-size"), 16);
        job.setTrainerOption(QStringLiteral("eval-every"), 1);
        window.loadJob(job);
        const int tab = window.tabs()->indexOf(window.evalTable());
        QVERIFY(tab >= 0);
        QCOMPARE(window.tabs()->tabText(tab), QStringLiteral("Evaluation"));
        window.tabs()->setCurrentIndex(tab);
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        window.startAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return supervisor::isFinal(window.supervisor()->state()); }, kRunTimeoutMs));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        const QString dir = window.supervisor()->runDir();

        // Live: one row per eval.csv row, with the same numbers.
        const EvalTable& live = *window.evalTable();
        const EvalReading files = ringmaster::runs::readRunEvals(dir);
        QVERIFY(files.exists);
        QVERIFY2(files.problems.isEmpty(), qPrintable(files.problems.join(QLatin1Char('\n'))));
        QCOMPARE(files.rows.size(), kEpochs);
        QCOMPARE(csvRows(dir + QStringLiteral("/eval.csv")), kEpochs);
        QCOMPARE(live.rowCount(), kEpochs);
        const auto metrics = runs::readCsvTable(dir + QStringLiteral("/metrics.csv"), QStringLiteral("metrics.csv"));
        for (int i = 0; i < kEpochs; ++i) {
            const EvalRow& shown = live.rows()[i];
            const EvalRow& read = files.rows[i];
            QCOMPARE(shown.epoch, qint64(i));
            QCOMPARE(shown.step, read.step);
            QCOMPARE(shown.epoch, read.epoch);
            QVERIFY2(approximately(shown.valLoss, read.valLoss, 1e-8), qPrintable(QString::number(shown.valLoss)));
            QVERIFY(std::isfinite(shown.valAccuracy) && shown.valAccuracy >= 0.0 && shown.valAccuracy <= 1.0);
            QVERIFY(approximately(shown.valAccuracy, read.valAccuracy, 1e-8));
            // The wall time of the training step it followed: metrics.csv's row of that step (written %.6f).
            QVERIFY(shown.wallTime.has_value() && read.wallTime.has_value());
            QVERIFY2(approximately(*shown.wallTime, *read.wallTime, 1e-5), qPrintable(QStringLiteral("%1 vs %2").arg(*shown.wallTime).arg(*read.wallTime)));
            const auto& row = metrics.rows.at(static_cast<int>(read.step) - 1);
            QCOMPARE(row.value(metrics.column("step")).toLongLong(), read.step);
            QCOMPARE(*read.wallTime, row.value(metrics.column("wall_time")).toDouble());
            QCOMPARE(live.cellText(i, EvalTable::Step), QString::number(read.step));
            QCOMPARE(live.cellText(i, EvalTable::WallTime), QString::number(*shown.wallTime, 'f', 2));
        }
        QVERIFY(live.rows().last().step > live.rows().first().step);
        QVERIFY2(live.headline().contains(QStringLiteral("5 evaluation(s)")), qPrintable(live.headline()));
        QCoreApplication::processEvents();
        screenshot(window, "eval-table.png");

        // The same run opened in the Runs tab: the same rows, from its files.
        RunsPanel* panel = window.runsPanel();
        QSignalSpy opened(panel, &RunsPanel::runsOpened);
        panel->openRunsInChart({dir});
        QVERIFY(opened.wait(kCheckTimeoutMs));
        QCOMPARE(panel->evalTable()->rowCount(), kEpochs);
        for (int i = 0; i < kEpochs; ++i) {
            for (int column : {EvalTable::Epoch, EvalTable::Step}) QCOMPARE(panel->evalTable()->cellText(i, column), live.cellText(i, column));
            QVERIFY(approximately(panel->evalTable()->rows()[i].valLoss, live.rows()[i].valLoss, 1e-8));
        }
        QVERIFY(!panel->problemsBanner()->isVisibleTo(panel));
    }

    void pastRunShowsItsEvalCsv()
    {
        QTemporaryDir root;
        const QString run = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-mlp"), 12, true);
        RunsPanel panel;
        panel.addRoot(root.path());
        panel.resize(1300, 820);
        QSignalSpy opened(&panel, &RunsPanel::runsOpened);
        panel.openRunsInChart({run});
        QVERIFY(opened.wait(kCheckTimeoutMs));
        // run_fixture.h: an eval every 4 steps, accuracy 0.8 except 0.9 at step 8; metrics.csv wall time 0.25 per step.
        const EvalTable* table = panel.evalTable();
        QCOMPARE(table->rowCount(), 3);
        QCOMPARE(table->table()->rowCount(), 3);
        const QStringList steps{table->cellText(0, EvalTable::Step), table->cellText(1, EvalTable::Step), table->cellText(2, EvalTable::Step)};
        QCOMPARE(steps, (QStringList{QStringLiteral("4"), QStringLiteral("8"), QStringLiteral("12")}));
        QCOMPARE(table->cellText(1, EvalTable::Epoch), QStringLiteral("0"));
        QCOMPARE(table->cellText(1, EvalTable::ValLoss), QStringLiteral("0.5"));
        QCOMPARE(table->cellText(1, EvalTable::ValAccuracy), QStringLiteral("0.9"));
        QCOMPARE(table->cellText(2, EvalTable::ValAccuracy), QStringLiteral("0.8"));
        QCOMPARE(table->cellText(1, EvalTable::WallTime), QStringLiteral("2.00"));
        QCOMPARE(table->cellText(2, EvalTable::WallTime), QStringLiteral("3.00"));
        QVERIFY2(table->headline().contains(QStringLiteral("best val accuracy 0.9000 at step 8")), qPrintable(table->headline()));
        panel.detailTabs()->setCurrentWidget(panel.evalTable());
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        screenshot(panel, "runs-tab-past-run.png");

        // A run without eval.csv: an empty table that says so.
        QVERIFY(QFile::remove(run + QStringLiteral("/eval.csv")));
        QVERIFY(QFile::remove(run + QStringLiteral("/scalars.csv")));
        panel.openRunsInChart({run});
        QVERIFY(opened.wait(kCheckTimeoutMs));
        QCOMPARE(panel.evalTable()->rowCount(), 0);
        QVERIFY(panel.evalTable()->headline().contains(QStringLiteral("No evaluation yet")));
    }

    void restartDropsLaterRowsAndNoAccuracyShowsADash()
    {
        EvalTable table;
        auto step = [&](qint64 n) {
            supervisor::StepMetric metric;
            metric.step = n;
            metric.wallTime = 0.5 * n;
            table.noteStep(metric);
        };
        auto eval = [&](qint64 n, double accuracy) {
            supervisor::EvalMetric metric;
            metric.step = n;
            metric.epoch = n / 10 - 1;
            metric.valLoss = 1.0 / n;
            metric.valAccuracy = accuracy;
            table.append(metric);
        };
        for (qint64 n = 1; n <= 30; ++n) {
            step(n);
            if (n % 10 == 0) eval(n, std::nan(""));
        }
        QCOMPARE(table.rowCount(), 3);
        QCOMPARE(table.cellText(2, EvalTable::ValAccuracy), QStringLiteral("—"));
        QCOMPARE(table.cellText(2, EvalTable::WallTime), QStringLiteral("15.00"));
        QVERIFY(!table.headline().contains(QStringLiteral("best")));
        table.truncateAfter(20);   // restarted from the step-20 checkpoint
        QCOMPARE(table.rowCount(), 2);
        QCOMPARE(table.table()->rowCount(), 2);
        eval(30, 0.5);             // before any step of the restarted ranks: the wall time is not known
        QCOMPARE(table.cellText(2, EvalTable::WallTime), QString());
        QCOMPARE(table.cellText(2, EvalTable::ValAccuracy), QStringLiteral("0.5"));
        table.clear();
        QCOMPARE(table.table()->rowCount(), 0);
    }
};

QTEST_MAIN(TestEvalTable)
#include "tst_eval_table.moc"
