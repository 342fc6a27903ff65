// The Runs tab (RunsPanel, RunsModel) on run directories made by hand (tests/support/run_fixture.h): rows and
// their numbers, sorting by number, the filter, a damaged run's tooltip, rename and notes written to
// notes.json and seen by `ringmaster-runs list --json`, delete after a confirmation that refuses the running
// run, open and compare into the tab's chart (and the logs into its log view), a thousand runs listed off
// the GUI thread, and the tab wired into the main window, where a started run appears and updates when it
// ends (a stub trainer); a run made by another process appears and updates without Refresh (the folder
// watch, its poll off); a damaged run opens with what is readable and a line naming what is not.
// With RINGMASTER_SCREENSHOT_DIR set, it saves runs-tab.png there.
#include <QAction>
#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <unistd.h>
#include <QTimer>

#include <memory>

#include "ui_test_support.h"
#include "supervisor/job_spec.h"
#include "ui/panes/log_panel.h"
#include "ui/main_window.h"
#include "supervisor/run_supervisor.h"
#include "run_fixture.h"
#include "runs/run_notes.h"
#include "ui/panes/eval_table.h"
#include "ui/runs/runs_folder_watch.h"
#include "ui/runs/runs_model.h"
#include "protocol/run_lock.h"
#include "ui/runs/runs_panel.h"
#include "ui/charts/scalar_chart.h"

using namespace ringmaster;
using namespace ringmaster::ui;
using runs::test::makeScriptRun;
using runs::test::makeTrainerRun;
using runs::test::readFile;
using runs::test::writeFile;

using ringmaster::ui::test::statusOf;
using ringmaster::ui::test::refreshAndWait;

namespace {

constexpr int kListTimeoutMs = 60000;
constexpr int kManyRuns = 1000;
constexpr int kBoxPollMs = 20;
constexpr int kBoxTimeoutMs = 10000;

// The proxy's (shown) column, top to bottom.
QStringList shownColumn(const RunsPanel& panel, int column, int role = Qt::DisplayRole)
{
    QStringList values;
    for (int row = 0; row < panel.proxy()->rowCount(); ++row) values << panel.proxy()->index(row, column).data(role).toString();
    return values;
}

int sourceRowNamed(const RunsPanel& panel, const QString& name)
{
    for (int row = 0; row < panel.model()->rowCount(); ++row) {
        if (panel.model()->runs()[row].name == name) return row;
    }
    return -1;
}

// Answers the next modal QMessageBox with BUTTON; *seen tells whether one came.
std::shared_ptr<bool> answerNextMessageBox(QMessageBox::StandardButton button)
{
    auto seen = std::make_shared<bool>(false);
    auto* timer = new QTimer;
    auto elapsed = std::make_shared<QElapsedTimer>();
    elapsed->start();
    QObject::connect(timer, &QTimer::timeout, [timer, seen, elapsed, button] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
            *seen = true;
            box->button(button)->click();
        } else if (elapsed->elapsed() < kBoxTimeoutMs) {
            return;
        }
        timer->stop();
        timer->deleteLater();
    });
    timer->start(kBoxPollMs);
    return seen;
}

// A small run (job, summary, metrics): what a thousand-run listing needs, without the checkpoints.
void makeSmallRun(const QString& root, const QString& name, int steps)
{
    const QString dir = root + QLatin1Char('/') + name;
    writeFile(dir + QStringLiteral("/job.json"), R"({"launch": {"device": "cpu", "nproc": 1}, "trainer": {"model": "mlp"}, "version": 1})");
    writeFile(dir + QStringLiteral("/summary.json"), QByteArray(R"({"status": "completed", "steps": )") + QByteArray::number(steps) + "}");
    writeFile(dir + QStringLiteral("/metrics.csv"), "step,epoch,loss,lr,samples_per_sec,wall_time\n1,0,0.5,0.01,100,0.1\n");
}

// A stand-in for ringmaster-trainer: --version answers, --validate-only passes; a rank sleeps until stopped.
QString writeSleepingTrainer(const QString& dir)
{
    const QString path = dir + QStringLiteral("/sleeping-trainer.sh");
    writeFile(path, "#!/bin/sh\n" R"SH([ "$1" = --version ] && { printf 'ringmaster-trainer 0.1.0\nLibTorch 2.11.0\nCUDA: yes (13.0)\nNCCL: yes (2.28.9)\nGloo: yes\n'; exit 0; })SH" "\nfor a in \"$@\"; do [ \"$a\" = --validate-only ] && exit 0; done\nexec sleep 120\n");
    QFile::setPermissions(path, QFile::permissions(path) | QFileDevice::ExeOwner);
    return path;
}

// Runs /bin/sh -c SCRIPT with $1 = ARGUMENT, as another program would change the run folders; its exit code.
int runShell(const char* script, const QString& argument)
{
    QProcess shell;
    shell.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QString::fromLatin1(script), QStringLiteral("sh"), argument});
    if (!shell.waitForFinished(kListTimeoutMs)) return -1;
    return shell.exitStatus() == QProcess::NormalExit ? shell.exitCode() : -1;
}

void saveScreenshot(QWidget& widget, const char* name)
{
    const QString dir = qEnvironmentVariable("RINGMASTER_SCREENSHOT_DIR");
    if (!dir.isEmpty()) widget.grab().save(dir + QLatin1Char('/') + QLatin1String(name));
}

} // namespace

class TestRunsPanel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void listsRunsWithTheirFieldsAndSortsNumbersAsNumbers()
    {
        QTemporaryDir root;
        makeTrainerRun(root.path(), QStringLiteral("20261130-100000-nine"), 9);
        makeTrainerRun(root.path(), QStringLiteral("20261130-110000-hundred"), 100);
        makeTrainerRun(root.path(), QStringLiteral("20261130-120000-ten"), 10);
        makeScriptRun(root.path(), QStringLiteral("20261129-090000-train"));
        writeFile(root.path() + QStringLiteral("/not-a-run/readme.txt"), "hello");
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QCOMPARE(panel.model()->rowCount(), 4);

        const runs::RunRecord& ten = panel.model()->runs()[sourceRowNamed(panel, QStringLiteral("20261130-120000-ten"))];
        const int tenRow = sourceRowNamed(panel, QStringLiteral("20261130-120000-ten"));
        auto cell = [&](int column) { return panel.model()->index(tenRow, column).data().toString(); };
        QCOMPARE(cell(RunsModel::Name), QStringLiteral("20261130-120000-ten"));
        QCOMPARE(cell(RunsModel::Started), QStringLiteral("2026-11-30 12:00:00"));
        QCOMPARE(cell(RunsModel::Status), QStringLiteral("completed"));
        QCOMPARE(cell(RunsModel::Kind), QStringLiteral("trainer"));
        QCOMPARE(cell(RunsModel::Model), QStringLiteral("mlp"));
        QCOMPARE(cell(RunsModel::World), QStringLiteral("2"));
        QCOMPARE(cell(RunsModel::Steps), QStringLiteral("10"));
        QCOMPARE(cell(RunsModel::FinalLoss), QStringLiteral("0.1"));
        QCOMPARE(cell(RunsModel::BestValAcc), QStringLiteral("0.9000"));
        QCOMPARE(cell(RunsModel::Duration), QStringLiteral("1:02:05"));
        QCOMPARE(ten.path, QDir(root.path()).absoluteFilePath(QStringLiteral("20261130-120000-ten")));

        // Newest first by default; steps sort 3 < 9 < 10 < 100 (as text, "100" would come before "9").
        QCOMPARE(shownColumn(panel, RunsModel::Name).first(), QStringLiteral("20261130-120000-ten"));
        panel.table()->sortByColumn(RunsModel::Steps, Qt::AscendingOrder);
        QCOMPARE(shownColumn(panel, RunsModel::Steps), QString::fromLatin1("3 9 10 100").split(QLatin1Char(' ')));
        panel.table()->sortByColumn(RunsModel::FinalLoss, Qt::AscendingOrder);
        QCOMPARE(shownColumn(panel, RunsModel::Steps), QString::fromLatin1("100 10 9 3").split(QLatin1Char(' ')));   // 1/100 < 1/10 < 1/9 < 0.3333
        panel.table()->sortByColumn(RunsModel::Started, Qt::AscendingOrder);
        QCOMPARE(shownColumn(panel, RunsModel::Name).first(), QStringLiteral("20261129-090000-train"));
    }

    void filterMatchesNameModelStatusAndNotes()
    {
        QTemporaryDir root;
        const QString a = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-mlp"));
        makeTrainerRun(root.path(), QStringLiteral("20261130-110000-other"));
        makeScriptRun(root.path(), QStringLiteral("20261129-090000-train"));
        runs::writeRunNotes(a, {QString(), QStringLiteral("the LR sweep, second try")});
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QCOMPARE(panel.proxy()->rowCount(), 3);
        panel.filterEdit()->setText(QStringLiteral("lr sweep"));   // notes, any case
        QCOMPARE(shownColumn(panel, RunsModel::Name), QStringList{QStringLiteral("20261130-100000-mlp")});
        panel.filterEdit()->setText(QStringLiteral("STOPPED"));    // status
        QCOMPARE(shownColumn(panel, RunsModel::Name), QStringList{QStringLiteral("20261129-090000-train")});
        panel.filterEdit()->setText(QStringLiteral("train"));      // the script's name (its model) and its folder
        QCOMPARE(shownColumn(panel, RunsModel::Name), QStringList{QStringLiteral("20261129-090000-train")});
        panel.filterEdit()->setText(QStringLiteral("mlp"));        // model
        QCOMPARE(panel.proxy()->rowCount(), 2);
        panel.filterEdit()->setText(QStringLiteral("other"));      // name
        QCOMPARE(shownColumn(panel, RunsModel::Name), QStringList{QStringLiteral("20261130-110000-other")});
        panel.filterEdit()->clear();
        QCOMPARE(panel.proxy()->rowCount(), 3);
    }

    void damagedRunIsMarkedWithItsProblems()
    {
        QTemporaryDir root;
        const QString damaged = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-damaged"));
        makeTrainerRun(root.path(), QStringLiteral("20261130-110000-fine"));
        QVERIFY(QFile::remove(damaged + QStringLiteral("/summary.json")));
        QFile metrics(damaged + QStringLiteral("/metrics.csv"));
        QVERIFY(metrics.open(QIODevice::Append));
        metrics.write("13,0,0.07");   // a row cut short by a crash
        metrics.close();
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        const QModelIndex bad = panel.model()->index(sourceRowNamed(panel, QStringLiteral("20261130-100000-damaged")), RunsModel::Steps);
        const QModelIndex good = panel.model()->index(sourceRowNamed(panel, QStringLiteral("20261130-110000-fine")), RunsModel::Steps);
        const QString tip = bad.data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("Problems:")) && tip.contains(QStringLiteral("summary.json missing")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("metrics.csv")), qPrintable(tip));
        QVERIFY(bad.data(Qt::BackgroundRole).isValid());
        QCOMPARE(bad.data().toString(), QStringLiteral("12"));   // what is readable is still shown
        QVERIFY(!good.data(Qt::ToolTipRole).toString().contains(QStringLiteral("Problems:")));
        QVERIFY(!good.data(Qt::BackgroundRole).isValid());
    }

    void renameWritesNotesFileSeenAfterReloadAndByTheCli()
    {
        QTemporaryDir root;
        const QString dir = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-mlp"));
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QSignalSpy spy(&panel, &RunsPanel::refreshed);
        QVERIFY(panel.saveNotes(dir, {QStringLiteral("baseline"), QStringLiteral("lr 0.01, 12 steps")}));
        QVERIFY(spy.wait(kListTimeoutMs));
        const QJsonObject stored = QJsonDocument::fromJson(readFile(dir + QStringLiteral("/notes.json"))).object();
        QCOMPARE(stored.value(QStringLiteral("title")).toString(), QStringLiteral("baseline"));
        QCOMPARE(stored.value(QStringLiteral("notes")).toString(), QStringLiteral("lr 0.01, 12 steps"));
        QCOMPARE(panel.model()->index(0, RunsModel::Name).data().toString(), QStringLiteral("baseline"));
        QVERIFY(QDir(dir).exists());   // the folder keeps its name

        // A new panel (the app started again) reads it back from the run directory.
        RunsPanel again;
        again.addRoot(root.path());
        QVERIFY(refreshAndWait(again, kListTimeoutMs));
        QCOMPARE(again.model()->runs().first().title, QStringLiteral("baseline"));
        QCOMPARE(again.model()->runs().first().notes, QStringLiteral("lr 0.01, 12 steps"));

        const QString cli = qEnvironmentVariable("RINGMASTER_RUNS");
        if (cli.isEmpty()) QSKIP("RINGMASTER_RUNS not set (run through ctest)");
        QProcess list;
        list.start(cli, {QStringLiteral("list"), QStringLiteral("--root"), root.path(), QStringLiteral("--json")});
        QVERIFY(list.waitForFinished(kListTimeoutMs));
        QCOMPARE(list.exitCode(), 0);
        const QJsonArray listed = QJsonDocument::fromJson(list.readAllStandardOutput()).array();
        QCOMPARE(listed.size(), 1);
        QCOMPARE(listed[0].toObject().value(QStringLiteral("title")).toString(), QStringLiteral("baseline"));
        QCOMPARE(listed[0].toObject().value(QStringLiteral("notes")).toString(), QStringLiteral("lr 0.01, 12 steps"));
    }

    // A run another launcher or window runs now (it holds the run's supervisor lock) is not deleted: refused with
    // the holder named, before and after the question (here the lock is taken on another open file description,
    // which the kernel treats as another holder, as it would another process).
    void deleteRefusesARunAnotherProcessRuns()
    {
        QTemporaryDir root;
        const QString held = makeTrainerRun(root.path(), QStringLiteral("20261130-130000-held"));
        ringmaster::protocol::RunLock lock;
        std::string detail;
        QCOMPARE(lock.acquire(QFile::encodeName(held).toStdString(), &detail), ringmaster::protocol::RunLock::Result::Taken);
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        panel.setConfirmDeletes(false); // no question: the refusal comes before any
        QVERIFY(!panel.deleteRun(held));
        QVERIFY(QFile::exists(held + QStringLiteral("/metrics.csv")));
        QVERIFY2(panel.statusLabel()->text().contains(QStringLiteral("is being run right now by pid %1").arg(::getpid())),
                 qPrintable(panel.statusLabel()->text()));
        lock.release();
        QVERIFY(panel.deleteRun(held));
        QVERIFY(!QDir(held).exists());
    }

    void deleteAsksFirstRemovesExactlyThatRunAndRefusesTheRunningOne()
    {
        QTemporaryDir root;
        const QString keep = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-keep"));
        const QString gone = makeTrainerRun(root.path(), QStringLiteral("20261130-110000-gone"));
        const QString running = makeTrainerRun(root.path(), QStringLiteral("20261130-120000-running"));
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QCOMPARE(panel.model()->rowCount(), 3);

        auto seen = answerNextMessageBox(QMessageBox::Cancel);
        QVERIFY(!panel.deleteRun(gone));
        QVERIFY(*seen);
        QVERIFY(QDir(gone).exists());

        seen = answerNextMessageBox(QMessageBox::Yes);
        QSignalSpy spy(&panel, &RunsPanel::refreshed);
        QVERIFY(panel.deleteRun(gone));
        QVERIFY(*seen);
        QVERIFY(!QDir(gone).exists());
        QVERIFY(QFile::exists(keep + QStringLiteral("/metrics.csv")));
        QVERIFY(QFile::exists(running + QStringLiteral("/metrics.csv")));
        QVERIFY(spy.wait(kListTimeoutMs));
        QCOMPARE(panel.model()->rowCount(), 2);

        // The run being written now: refused without asking, shown as running, its Delete button disabled.
        panel.setActiveRun(running);
        QVERIFY(spy.wait(kListTimeoutMs));
        const QModelIndex status = panel.model()->index(panel.model()->rowOf(running), RunsModel::Status);
        QCOMPARE(status.data().toString(), QStringLiteral("running"));
        seen = answerNextMessageBox(QMessageBox::Yes);
        QVERIFY(!panel.deleteRun(running));
        QVERIFY(!*seen);
        QVERIFY(QFile::exists(running + QStringLiteral("/metrics.csv")));
        QVERIFY2(panel.statusLabel()->text().contains(QStringLiteral("running now")), qPrintable(panel.statusLabel()->text()));
        // Once it ended, it can go (here without a dialog).
        panel.setActiveRun(QString());
        QVERIFY(spy.wait(kListTimeoutMs));
        panel.setConfirmDeletes(false);
        QVERIFY(panel.deleteRun(running));
        QVERIFY(!QDir(running).exists());
        QVERIFY(QDir(keep).exists());
        // Not a listed run: nothing is deleted.
        const QString stranger = root.path() + QStringLiteral("/photos");
        writeFile(stranger + QStringLiteral("/cat.jpg"), "meow");
        QVERIFY(!panel.deleteRun(stranger));
        QVERIFY(QFile::exists(stranger + QStringLiteral("/cat.jpg")));
    }

    void openAndCompareDrawTheRunsInTheChart()
    {
        QTemporaryDir root;
        const QString twelve = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-twelve"), 12);
        const QString twenty = makeTrainerRun(root.path(), QStringLiteral("20261130-110000-twenty"), 20, true);
        const QString script = makeScriptRun(root.path(), QStringLiteral("20261129-090000-train"));
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QVERIFY(panel.saveNotes(twenty, {QStringLiteral("long one"), QString()}));
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));

        QSignalSpy opened(&panel, &RunsPanel::runsOpened);
        panel.openRunsInChart({twelve});
        QVERIFY(opened.wait(kListTimeoutMs));
        const QString label = QStringLiteral("20261130-100000-twelve");
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("loss"), label), 12);
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("val_accuracy"), label), 3);
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("lr"), label), 12);
        QVERIFY(panel.chart()->isTicked(QStringLiteral("loss")));
        QCOMPARE(panel.chart()->drawnPointCount(QStringLiteral("loss"), label), 12);
        QVERIFY(panel.summaryLabel()->text().contains(QStringLiteral("3725.4")));   // summary.json's seconds
        // Its logs, in the tab's own log view: each rank's and the launcher's (-1).
        QCOMPARE(panel.logs()->lines(0), QStringList{QStringLiteral("[2026-11-30 14:05:44.101] [info] rank 0 of 2 joined")});
        QCOMPARE(panel.logs()->lines(1), QStringList{QStringLiteral("[2026-11-30 14:05:44.102] [info] rank 1 of 2 joined")});
        QCOMPARE(panel.logs()->lines(-1), QStringList{QStringLiteral("launching 2 ranks")});

        // Compare: the selected runs overlaid, under their labels (the title where there is one).
        panel.selectRuns({twenty, script});
        QCOMPARE(panel.selectedRuns().size(), 2);
        QPushButton* compare = nullptr;
        for (auto* button : panel.findChildren<QPushButton*>()) {
            if (button->text() == QStringLiteral("Compare")) compare = button;
        }
        QVERIFY(compare && compare->isEnabled());
        compare->click();
        QVERIFY(opened.wait(kListTimeoutMs));
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("loss"), QStringLiteral("long one")), 20);
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("val_accuracy"), QStringLiteral("long one")), 5);
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("loss"), QStringLiteral("20261129-090000-train")), 3);
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("loss"), label), 0);   // the earlier run is gone
        QCOMPARE(panel.chart()->drawnPointCount(QStringLiteral("loss"), QStringLiteral("long one")), 20);
        QCOMPARE(panel.openRuns().size(), 2);
        // The logs are the first compared run's (newest first: "long one"), not the script's.
        QCOMPARE(panel.openRuns().first(), QDir::cleanPath(twenty));
        QCOMPARE(panel.logs()->lines(1).size(), 1);
        writeFile(script + QStringLiteral("/logs/rank-0.log"), "hello again\n");
        panel.openRunsInChart({script});
        QVERIFY(opened.wait(kListTimeoutMs));
        QCOMPARE(panel.logs()->lines(0), QStringList{QStringLiteral("hello again")});
        QCOMPARE(panel.logs()->lines(1), QStringList());   // a one-rank run: no rank 1 left from before
    }

    void aDamagedRunOpensWithWhatIsReadableAndSaysWhatIsMissing()
    {
        QTemporaryDir root;
        const QString damaged = makeTrainerRun(root.path(), QStringLiteral("20261130-100000-damaged"), 12);
        const QString fine = makeTrainerRun(root.path(), QStringLiteral("20261130-110000-fine"), 12);
        QVERIFY(QFile::remove(damaged + QStringLiteral("/summary.json")));
        for (const auto& [file, cut] : {std::pair{"/metrics.csv", "13,0,0.07"}, std::pair{"/eval.csv", "0,16,0.4"}}) {
            QFile csv(damaged + QLatin1String(file));
            QVERIFY(csv.open(QIODevice::Append));
            csv.write(cut);   // a last row cut short by a crash
        }
        RunsPanel panel;
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QSignalSpy opened(&panel, &RunsPanel::runsOpened);
        panel.openRun(damaged);
        QVERIFY(opened.wait(kListTimeoutMs));
        // What is readable is shown: every whole row of metrics.csv and eval.csv, and the logs.
        QCOMPARE(panel.chart()->pointCount(QStringLiteral("loss"), QStringLiteral("20261130-100000-damaged")), 12);
        QCOMPARE(panel.evalTable()->rowCount(), 3);
        QCOMPARE(panel.logs()->lines(0).size(), 1);
        // What is not is said, in a line above the tabs (and in the summary and the evaluation table's headline).
        QVERIFY(panel.problemsBanner()->isVisibleTo(&panel));
        const QString banner = panel.problemsBanner()->text();
        for (const char* expected : {"20261130-100000-damaged", "summary.json missing", "metrics.csv line 14", "eval.csv line 5"}) {
            QVERIFY2(banner.contains(QLatin1String(expected)), qPrintable(banner));
        }
        QVERIFY2(panel.summaryLabel()->text().contains(QStringLiteral("summary.json missing")), qPrintable(panel.summaryLabel()->text()));
        QVERIFY2(panel.evalTable()->headline().contains(QStringLiteral("eval.csv line 5")), qPrintable(panel.evalTable()->headline()));
        // A whole run: no such line.
        panel.openRun(fine);
        QVERIFY(opened.wait(kListTimeoutMs));
        QVERIFY(!panel.problemsBanner()->isVisibleTo(&panel));
        QCOMPARE(panel.evalTable()->rowCount(), 3);
    }

    // ringmaster-launch in a terminal: its run folder appears in the root, then its files; later its summary.json.
    void aRunMadeElsewhereAppearsAndUpdatesWithoutRefresh()
    {
        QTemporaryDir root;
        makeTrainerRun(root.path(), QStringLiteral("20261128-093000-mlp"));
        RunsPanel panel;
        panel.folderWatch()->setPollInterval(0);   // change notices only: nothing lists again on a timer
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QCOMPARE(panel.model()->rowCount(), 1);
        QSignalSpy refreshed(&panel, &RunsPanel::refreshed);

        // The folder first (not a run yet: no job.json): the tab watches it.
        const QString dir = QDir::cleanPath(QDir(root.path()).absoluteFilePath(QStringLiteral("20261201-090000-mlp")));
        QCOMPARE(runShell("mkdir \"$1\"", dir), 0);
        QVERIFY(QTest::qWaitFor([&] { return panel.folderWatch()->watched().contains(dir) && !panel.isRefreshing(); }, kListTimeoutMs));
        QCOMPARE(panel.model()->rowCount(), 1);
        // Then its files, as the launcher and the trainer write them: the run appears, not finished yet.
        QCOMPARE(runShell("printf '{\"launch\": {\"device\": \"cpu\", \"nproc\": 1}, \"trainer\": {\"model\": \"mlp\"}, \"version\": 1}\\n' > \"$1/job.json\" && "
                          "printf 'step,epoch,loss,lr,samples_per_sec,wall_time\\n1,0,0.5,0.01,100,0.1\\n' > \"$1/metrics.csv\"", dir), 0);
        QVERIFY(QTest::qWaitFor([&] { return panel.model()->rowOf(dir) >= 0; }, kListTimeoutMs));
        QCOMPARE(statusOf(panel, dir), QStringLiteral("unknown"));
        QCOMPARE(panel.model()->rowCount(), 2);
        // It ends: summary.json written to a temporary name and renamed, as the trainer does.
        QCOMPARE(runShell("printf '{\"status\": \"completed\", \"steps\": 1}\\n' > \"$1/summary.json.tmp\" && mv \"$1/summary.json.tmp\" \"$1/summary.json\"", dir), 0);
        QVERIFY(QTest::qWaitFor([&] { return statusOf(panel, dir) == QStringLiteral("completed"); }, kListTimeoutMs));
        QVERIFY(refreshed.size() >= 2);   // listed again by the watch, Refresh never pressed
        // Finished runs are not watched any more; the root still is.
        QVERIFY(QTest::qWaitFor([&] { return !panel.isRefreshing() && !panel.folderWatch()->watched().contains(dir); }, kListTimeoutMs));
        QVERIFY(panel.folderWatch()->watched().contains(QDir::cleanPath(QDir(root.path()).absolutePath())));
        // The listing's own writes (each run's index and the root's, hidden files) change no signature, so
        // they do not make it list again and again.
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QSignalSpy checks(panel.folderWatch(), &RunsFolderWatch::checked);
        panel.folderWatch()->checkAll();
        QVERIFY(checks.wait(kListTimeoutMs));
        QCOMPARE(checks.last().first().toBool(), false);
    }

    // A launcher elsewhere holds the run's lock while it runs: "running". When it dies no file changes; the
    // watch's poll (the lock's state is part of a folder's signature) lists the run again, "interrupted".
    void aRunWhoseLauncherDiesBecomesInterruptedWithoutRefresh()
    {
        QTemporaryDir root;
        const QString dir = QDir::cleanPath(makeTrainerRun(root.path(), QStringLiteral("20261201-100000-mlp")));
        QVERIFY(QFile::remove(dir + QStringLiteral("/summary.json")));
        auto lock = std::make_unique<protocol::RunLock>();
        std::string detail;
        QVERIFY(lock->acquire(QFile::encodeName(dir).toStdString(), &detail) == protocol::RunLock::Result::Taken);
        RunsPanel panel;
        panel.folderWatch()->setPollInterval(100);   // the poll runs while the tab is shown
        panel.show();
        panel.addRoot(root.path());
        QVERIFY(refreshAndWait(panel, kListTimeoutMs));
        QVERIFY(QTest::qWaitFor([&] { return statusOf(panel, dir) == QStringLiteral("running"); }, kListTimeoutMs));
        // The watch has settled: a check of every watched folder finds nothing new.
        QSignalSpy checks(panel.folderWatch(), &RunsFolderWatch::checked);
        QVERIFY(QTest::qWaitFor([&] { return !panel.isRefreshing() && !checks.isEmpty() && !checks.last().first().toBool(); },
                                kListTimeoutMs));
        QCOMPARE(statusOf(panel, dir), QStringLiteral("running"));
        lock.reset();   // the launcher is gone: the kernel drops its lock, no file changes
        QVERIFY(QTest::qWaitFor([&] { return statusOf(panel, dir) == QStringLiteral("interrupted"); }, kListTimeoutMs));
    }

    void aThousandRunsAreListedOffTheGuiThread()
    {
        QTemporaryDir root;
        for (int i = 0; i < kManyRuns; ++i) makeSmallRun(root.path(), QStringLiteral("run-%1").arg(i, 4, 10, QLatin1Char('0')), i);
        RunsPanel panel;
        panel.addRoot(root.path());
        QSignalSpy spy(&panel, &RunsPanel::refreshed);
        QElapsedTimer clock;
        clock.start();
        panel.refresh();
        const qint64 refreshReturnedMs = clock.elapsed();
        QVERIFY(panel.isRefreshing());   // still reading, on a worker
        panel.refresh();                  // asked again meanwhile: one more listing when it ends
        QVERIFY2(refreshReturnedMs < 100, qPrintable(QString::number(refreshReturnedMs)));
        QVERIFY(QTest::qWaitFor([&] { return spy.count() == 2; }, kListTimeoutMs));
        QCOMPARE(panel.model()->rowCount(), kManyRuns);
        panel.table()->sortByColumn(RunsModel::Steps, Qt::DescendingOrder);
        QCOMPARE(shownColumn(panel, RunsModel::Steps).first(), QStringLiteral("999"));
    }

    void mainWindowHasTheRunsTab()
    {
        QTemporaryDir root;
        const QString first = makeTrainerRun(root.path(), QStringLiteral("20261128-093000-mlp"), 40, true);
        const QString second = makeTrainerRun(root.path(), QStringLiteral("20261129-141500-mlp"), 60, true);
        makeScriptRun(root.path(), QStringLiteral("20261130-081200-train"));
        const QString damaged = makeTrainerRun(root.path(), QStringLiteral("20261130-101500-mlp"), 25);
        QVERIFY(QFile::remove(damaged + QStringLiteral("/summary.json")));
        runs::writeRunNotes(second, {QStringLiteral("lr 0.02 (best so far)"), QStringLiteral("try a longer warm-up next")});
        QByteArray slower = "step,wall_time,name,value\n";   // the first run learns more slowly: two curves to see
        for (int step = 1; step <= 40; ++step) {
            slower += QByteArray::number(step) + ",1796049634.5,loss," + QByteArray::number(3.0 / (step + 2), 'g', 17) + '\n';
        }
        writeFile(first + QStringLiteral("/scalars.csv"), slower);

        MainWindow window;
        window.setConfirmOnClose(false);
        QTabWidget* tabs = window.tabs();
        const int index = tabs->indexOf(window.runsPanel());
        QVERIFY(index >= 0);
        QCOMPARE(tabs->tabText(index), QStringLiteral("Runs"));
        window.runsPanel()->addRoot(root.path());
        tabs->setCurrentIndex(index);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(QTest::qWaitFor([&] { return window.runsPanel()->model()->rowCount() == 4; }, kListTimeoutMs));
        QSignalSpy opened(window.runsPanel(), &RunsPanel::runsOpened);
        window.runsPanel()->selectRuns({first, second});
        window.runsPanel()->openRunsInChart({first, second});
        QVERIFY(opened.wait(kListTimeoutMs));
        QCOMPARE(window.runsPanel()->chart()->pointCount(QStringLiteral("loss"), QStringLiteral("lr 0.02 (best so far)")), 60);
        QCOMPARE(window.runsPanel()->chart()->pointCount(QStringLiteral("loss"), QStringLiteral("20261128-093000-mlp")), 40);
        QCOMPARE(window.scalarChart()->names(), QStringList());   // the live run's chart is untouched
        QTest::qWait(200);   // let the chart's queued replot land before the picture
        saveScreenshot(window, "runs-tab.png");
    }

    // The main window tells the tab when a run starts (it appears, "running") and when it ends (it updates).
    void aStartedRunAppearsAndUpdatesWhenItEnds()
    {
        QTemporaryDir root;
        qputenv("RINGMASTER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");   // CPU ranks, whatever the machine
        qputenv("RINGMASTER_TRAINER", QFile::encodeName(writeSleepingTrainer(root.path())));
        supervisor::JobSpec job = supervisor::defaultJob(0);
        job.device = QStringLiteral("cpu");
        job.nproc = 1;
        job.outputRoot = root.path() + QStringLiteral("/runs");
        QVERIFY(QDir().mkpath(job.outputRoot));
        makeTrainerRun(job.outputRoot, QStringLiteral("20261128-093000-mlp"));

        MainWindow window;
        window.setConfirmOnClose(false);
        window.loadJob(job);
        window.show();
        QVERIFY(QTest::qWaitFor([&] { return window.startAction()->isEnabled(); }, kListTimeoutMs));
        RunsPanel* panel = window.runsPanel();
        QVERIFY(refreshAndWait(*panel, kListTimeoutMs));
        QCOMPARE(panel->model()->rowCount(), 1);   // the form's output root is listed

        window.startAction()->trigger();
        QVERIFY(QTest::qWaitFor([&] { return !window.supervisor()->ranks().isEmpty() && window.supervisor()->ranks().at(0).pid > 0; },
                                kListTimeoutMs));   // the stub never says hello: the run stays "starting"
        const QString runDir = QDir::cleanPath(QDir(window.supervisor()->runDir()).absolutePath());
        QVERIFY(QTest::qWaitFor([&] { return statusOf(*panel, runDir) == QStringLiteral("running"); }, kListTimeoutMs));
        QCOMPARE(panel->model()->rowCount(), 2);

        window.supervisor()->kill();
        QVERIFY(QTest::qWaitFor([&] { return supervisor::isFinal(window.supervisor()->state()); }, kListTimeoutMs));
        QVERIFY(QTest::qWaitFor([&] { return !panel->isRefreshing() && statusOf(*panel, runDir) != QStringLiteral("running"); }, kListTimeoutMs));
        const QJsonObject summary = QJsonDocument::fromJson(readFile(runDir + QStringLiteral("/summary.json"))).object();
        QVERIFY(QTest::qWaitFor([&] { return statusOf(*panel, runDir) == summary.value(QStringLiteral("status")).toString(); }, kListTimeoutMs));
        QVERIFY(!statusOf(*panel, runDir).isEmpty());
        qunsetenv("RINGMASTER_TRAINER");
    }
};

QTEST_MAIN(TestRunsPanel)
#include "tst_runs_panel.moc"
