// The Runs tab's Compare (RunsPanel) on run directories made by hand (tests/support/run_fixture.h): one graph
// per run, each in its own colour that stays the same after a refresh and a re-open, the colour the user
// chooses kept in notes.json and used by a new panel, x by wall time counted from each run's own start
// (runs days apart overlay), and the Hyperparameters tab listing the job.json settings that differ (all of
// them on request), with "—" for a run without a job.json.
#include <QApplication>
#include <QCheckBox>
#include <QDir>
#include <QColorDialog>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <memory>

#include "ui_test_support.h"
#include "ui/runs/hyperparameter_table.h"
#include "qcustomplot.h"
#include "ui/runs/run_colours.h"
#include "run_fixture.h"
#include "runs/run_notes.h"
#include "ui/runs/runs_model.h"
#include "ui/runs/runs_panel.h"
#include "ui/charts/scalar_chart.h"

using namespace ringmaster;
using namespace ringmaster::ui;
using runs::test::makeTrainerRun;
using runs::test::readFile;
using runs::test::writeFile;

using ringmaster::ui::test::refreshAndWait;

namespace {

constexpr int kWaitMs = 60000;
constexpr int kDialogPollMs = 20;
constexpr int kDialogTimeoutMs = 10000;
constexpr double kDaySeconds = 86400.0;
constexpr double kStepSeconds = 0.5;

// A trainer run of STEPS steps with trainer.lr = LR whose scalars.csv starts DAYS days after 2026-12-01.
QString makeRun(const QString& root, const QString& name, int steps, double lr, int days)
{
    const QString dir = makeTrainerRun(root, name, steps);
    QJsonObject job = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/job.json"))).object();
    QJsonObject trainer = job.value(QStringLiteral("trainer")).toObject();
    trainer.insert(QStringLiteral("lr"), lr);
    job.insert(QStringLiteral("trainer"), trainer);
    writeFile(dir + QStringLiteral("/job.json"), QJsonDocument(job).toJson());
    QByteArray scalars = "step,wall_time,name,value\n";
    for (int step = 1; step <= steps; ++step) {
        const double wall = 1796083200.0 + days * kDaySeconds + kStepSeconds * (step - 1);
        scalars += QByteArray::number(step) + ',' + QByteArray::number(wall, 'f', 3) + ",loss," + QByteArray::number(lr / step, 'g', 17) + '\n';
    }
    writeFile(dir + QStringLiteral("/scalars.csv"), scalars);
    return dir;
}

bool compareAndWait(RunsPanel& panel, const QStringList& runDirs)
{
    QSignalSpy opened(&panel, &RunsPanel::runsOpened);
    panel.selectRuns(runDirs);
    QPushButton* compare = nullptr;
    for (auto* button : panel.findChildren<QPushButton*>()) {
        if (button->text() == QStringLiteral("Compare")) compare = button;
    }
    if (compare == nullptr || !compare->isEnabled()) return false;
    compare->click();
    return opened.wait(kWaitMs) || !opened.isEmpty();
}

// The graphs of a panel's legend (the smoothed ones; the raw ones are left out of it), by legend name.
QMap<QString, QCPGraph*> legendGraphs(const RunsPanel& panel, const QString& title = QStringLiteral("scalars"))
{
    QMap<QString, QCPGraph*> graphs;
    QCustomPlot* plot = panel.chart()->panelPlot(title);
    for (int i = 0; plot != nullptr && i < plot->graphCount(); ++i) {
        if (plot->legend->hasItemWithPlottable(plot->graph(i))) graphs.insert(plot->graph(i)->name(), plot->graph(i));
    }
    return graphs;
}

QColor penOf(const RunsPanel& panel, const QString& legend)
{
    QCPGraph* graph = legendGraphs(panel).value(legend);
    return graph ? graph->pen().color() : QColor();
}

QColor swatchOf(const RunsPanel& panel, const QString& runDir)
{
    return panel.model()->index(panel.model()->rowOf(runDir), RunsModel::Name).data(Qt::DecorationRole).value<QColor>();
}

// Answers the next modal QColorDialog with COLOUR.
void answerNextColourDialog(const QColor& colour)
{
    auto* timer = new QTimer;
    auto elapsed = std::make_shared<QElapsedTimer>();
    elapsed->start();
    QObject::connect(timer, &QTimer::timeout, [timer, elapsed, colour] {
        if (auto* dialog = qobject_cast<QColorDialog*>(QApplication::activeModalWidget())) {
            dialog->setCurrentColor(colour);
            dialog->accept();
        } else if (elapsed->elapsed() < kDialogTimeoutMs) {
            return;
        }
        timer->stop();
        timer->deleteLater();
    });
    timer->start(kDialogPollMs);
}

const QString kSlowName = QStringLiteral("20261201-090000-slow");
const QString kFastName = QStringLiteral("20261204-090000-fast");

} // namespace

class TestRunsCompare : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void compareShowsOneGraphPerRunAndTheDifferingHyperparameters()
    {
        QTemporaryDir root;
        const QString slow = QDir::cleanPath(makeRun(root.path(), kSlowName, 12, 0.01, 0));
        const QString fast = QDir::cleanPath(makeRun(root.path(), kFastName, 20, 0.02, 3));   // three days later
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kWaitMs));
        QVERIFY(compareAndWait(panel, {slow, fast}));

        // One graph per run (loss is ticked), named by the run.
        const QMap<QString, QCPGraph*> graphs = legendGraphs(panel);
        QCOMPARE(graphs.keys(), (QStringList{kSlowName + QStringLiteral(" · loss"), kFastName + QStringLiteral(" · loss")}));
        QCOMPARE(graphs.value(kSlowName + QStringLiteral(" · loss"))->data()->size(), 12);
        QCOMPARE(graphs.value(kFastName + QStringLiteral(" · loss"))->data()->size(), 20);

        // Distinct colours, the runs' own (the table's swatches), the same after a refresh and a re-open.
        const QColor slowColour = penOf(panel, kSlowName + QStringLiteral(" · loss"));
        const QColor fastColour = penOf(panel, kFastName + QStringLiteral(" · loss"));
        QVERIFY(slowColour.isValid() && fastColour.isValid());
        QVERIFY(slowColour != fastColour);
        QCOMPARE(slowColour, swatchOf(panel, slow));
        QCOMPARE(fastColour, swatchOf(panel, fast));
        QCOMPARE(slowColour, automaticRunColour(kSlowName));
        QVERIFY(refreshAndWait(panel, kWaitMs));
        QCOMPARE(penOf(panel, kSlowName + QStringLiteral(" · loss")), slowColour);
        QCOMPARE(penOf(panel, kFastName + QStringLiteral(" · loss")), fastColour);
        QVERIFY(compareAndWait(panel, {fast, slow}));
        QCOMPARE(penOf(panel, kSlowName + QStringLiteral(" · loss")), slowColour);
        QCOMPARE(penOf(panel, kFastName + QStringLiteral(" · loss")), fastColour);

        // x by wall time: seconds since each run's own first point, so runs three days apart overlay.
        panel.chart()->setXAxis(ScalarChart::XAxis::WallTime);
        for (const auto& [name, steps] : {std::pair{kSlowName, 12}, std::pair{kFastName, 20}}) {
            const auto data = legendGraphs(panel).value(name + QStringLiteral(" · loss"))->data();
            QCOMPARE(data->constBegin()->key, 0.0);
            QCOMPARE((data->constEnd() - 1)->key, kStepSeconds * (steps - 1));
        }
        panel.chart()->setXAxis(ScalarChart::XAxis::Step);
        QCOMPARE((legendGraphs(panel).value(kFastName + QStringLiteral(" · loss"))->data()->constEnd() - 1)->key, 20.0);

        // The Hyperparameters tab: only trainer.lr differs; all rows on request.
        QTabWidget* tabs = panel.detailTabs();
        QCOMPARE(tabs->tabText(tabs->indexOf(panel.hyperparameters())), QStringLiteral("Hyperparameters"));
        HyperparameterTable* table = panel.hyperparameters();
        QVERIFY(table->onlyDifferencesBox()->isChecked());
        QCOMPARE(table->keys(), QStringList{QStringLiteral("trainer.lr")});
        const int slowColumn = static_cast<int>(panel.openRuns().indexOf(slow));
        const int fastColumn = static_cast<int>(panel.openRuns().indexOf(fast));
        QVERIFY(slowColumn >= 0 && fastColumn >= 0);
        QCOMPARE(table->cellText(QStringLiteral("trainer.lr"), slowColumn), QStringLiteral("0.01"));
        QCOMPARE(table->cellText(QStringLiteral("trainer.lr"), fastColumn), QStringLiteral("0.02"));
        QCOMPARE(table->table()->horizontalHeaderItem(slowColumn)->text(), kSlowName);
        if (const QString dir = qEnvironmentVariable("RINGMASTER_SCREENSHOT_DIR"); !dir.isEmpty()) {
            tabs->setCurrentWidget(table);
            panel.resize(1100, 700);
            panel.show();
            QVERIFY(QTest::qWaitForWindowExposed(&panel));
            QVERIFY(panel.grab().save(dir + QStringLiteral("/hyperparameters.png")));
            panel.hide();
        }
        table->onlyDifferencesBox()->click();
        QVERIFY(table->keys().contains(QStringLiteral("trainer.model")));
        QVERIFY(table->keys().contains(QStringLiteral("launch.nproc")));
        QVERIFY(table->keys().contains(QStringLiteral("trainer.lr")));
        QCOMPARE(table->cellText(QStringLiteral("trainer.model"), slowColumn), QStringLiteral("mlp"));
        QCOMPARE(table->cellText(QStringLiteral("trainer.model"), fastColumn), QStringLiteral("mlp"));
        table->onlyDifferencesBox()->click();
        QCOMPARE(table->keys(), QStringList{QStringLiteral("trainer.lr")});

        // A run without job.json: "—" in its column, and it does not make every row differ.
        const QString bare = QDir::cleanPath(makeRun(root.path(), QStringLiteral("20261202-090000-bare"), 5, 0.05, 1));
        QVERIFY(QFile::remove(bare + QStringLiteral("/job.json")));
        QVERIFY(refreshAndWait(panel, kWaitMs));
        QVERIFY(compareAndWait(panel, {slow, fast, bare}));
        QCOMPARE(legendGraphs(panel).size(), 3);
        // Its automatic colour is the slow run's (the same hash slot): it moves to a free one, the others stay.
        QCOMPARE(automaticRunColour(QStringLiteral("20261202-090000-bare")), slowColour);
        const QColor bareColour = penOf(panel, QStringLiteral("20261202-090000-bare · loss"));
        QCOMPARE(penOf(panel, kSlowName + QStringLiteral(" · loss")), slowColour);
        QCOMPARE(penOf(panel, kFastName + QStringLiteral(" · loss")), fastColour);
        QVERIFY(bareColour.isValid() && bareColour != slowColour && bareColour != fastColour);
        QCOMPARE(table->keys(), QStringList{QStringLiteral("trainer.lr")});
        QCOMPARE(table->cellText(QStringLiteral("trainer.lr"), static_cast<int>(panel.openRuns().indexOf(bare))), HyperparameterTable::kUnknown);
        QCOMPARE(table->table()->columnCount(), 3);
    }

    void tickingARunOverlaysItAndUntickingRemovesIt()
    {
        QTemporaryDir root;
        const QString slow = QDir::cleanPath(makeRun(root.path(), kSlowName, 12, 0.01, 0));
        const QString fast = QDir::cleanPath(makeRun(root.path(), kFastName, 20, 0.02, 3));
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kWaitMs));
        QSignalSpy opened(&panel, &RunsPanel::runsOpened);
        panel.openRunsInChart({slow});
        QVERIFY(opened.wait(kWaitMs));
        QCOMPARE(panel.model()->tickedRuns(), QStringList{slow});   // Open ticks the run it draws
        auto tick = [&panel](const QString& run, bool on) {
            const QModelIndex index = panel.model()->index(panel.model()->rowOf(run), RunsModel::Name);
            return panel.model()->setData(index, on ? Qt::Checked : Qt::Unchecked, Qt::CheckStateRole);
        };

        QVERIFY(tick(fast, true));
        QVERIFY(opened.wait(kWaitMs));
        QCOMPARE(panel.openRuns().size(), 2);
        QCOMPARE(legendGraphs(panel).size(), 2);
        QVERIFY(penOf(panel, kSlowName + QStringLiteral(" · loss")) != penOf(panel, kFastName + QStringLiteral(" · loss")));
        QCOMPARE(panel.hyperparameters()->keys(), QStringList{QStringLiteral("trainer.lr")});

        QVERIFY(tick(slow, false));
        QVERIFY(opened.wait(kWaitMs));
        QCOMPARE(panel.openRuns(), QStringList{fast});
        QCOMPARE(legendGraphs(panel).keys(), QStringList{kFastName + QStringLiteral(" · loss")});
        QVERIFY(refreshAndWait(panel, kWaitMs));
        QCOMPARE(panel.model()->tickedRuns(), QStringList{fast});   // ticks outlive a refresh

        QVERIFY(tick(fast, false));
        QVERIFY(opened.wait(kWaitMs));
        QVERIFY(panel.openRuns().isEmpty());
        QVERIFY(panel.chart()->panelTitles().isEmpty());
    }

    void aChosenColourIsKeptAcrossReopen()
    {
        QTemporaryDir root;
        const QString slow = QDir::cleanPath(makeRun(root.path(), kSlowName, 12, 0.01, 0));
        const QString fast = QDir::cleanPath(makeRun(root.path(), kFastName, 20, 0.02, 3));
        const QColor chosen(QStringLiteral("#123456"));
        QColor fastColour;
        {
            RunsPanel panel;
            panel.addRoot(root.path());
            QVERIFY(refreshAndWait(panel, kWaitMs));
            QVERIFY(compareAndWait(panel, {slow, fast}));
            fastColour = penOf(panel, kFastName + QStringLiteral(" · loss"));
            QVERIFY(penOf(panel, kSlowName + QStringLiteral(" · loss")) != chosen);

            // Chosen in the dialog (the context menu's Colour…): kept in notes.json, drawn at once.
            panel.selectRuns({slow});
            QSignalSpy listed(&panel, &RunsPanel::refreshed);
            answerNextColourDialog(chosen);
            panel.chooseColourOfSelected();
            QVERIFY(listed.wait(kWaitMs) || !listed.isEmpty());
            QCOMPARE(runs::readRunNotes(slow).colour, QStringLiteral("#123456"));
            QCOMPARE(swatchOf(panel, slow), chosen);
            QCOMPARE(penOf(panel, kSlowName + QStringLiteral(" · loss")), chosen);
            QCOMPARE(penOf(panel, kFastName + QStringLiteral(" · loss")), fastColour);
            // A rename keeps it.
            QVERIFY(panel.saveNotes(slow, {QStringLiteral("baseline"), QString()}));
            QVERIFY(refreshAndWait(panel, kWaitMs));
            QCOMPARE(swatchOf(panel, slow), chosen);
        }
        // A new panel (the app started again) draws the run in the chosen colour.
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kWaitMs));
        QVERIFY(compareAndWait(panel, {slow, fast}));
        QCOMPARE(penOf(panel, QStringLiteral("baseline · loss")), chosen);
        QCOMPARE(penOf(panel, kFastName + QStringLiteral(" · loss")), fastColour);

        // Automatic colour: back to the one derived from the folder's name.
        QVERIFY(panel.saveRunColour(slow, QColor()));
        QVERIFY(refreshAndWait(panel, kWaitMs));
        QCOMPARE(penOf(panel, QStringLiteral("baseline · loss")), automaticRunColour(kSlowName));
        QVERIFY(runs::readRunNotes(slow).colour.isEmpty());
        QCOMPARE(runs::readRunNotes(slow).title, QStringLiteral("baseline"));
    }
};

QTEST_MAIN(TestRunsCompare)
#include "tst_runs_compare.moc"
