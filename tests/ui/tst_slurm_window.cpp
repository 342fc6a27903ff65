// The window with Slurm (issue 11, the GUI side). With stubs of Slurm's tools first on PATH: choosing
// "Slurm cluster" greys out this machine's devices; the Runs tab shows a run Slurm still holds as "queued"
// with Slurm's word in its tooltip (asking Slurm only about unfinished Slurm runs), refuses to delete it,
// and Open follows it live in the window, whose state line shows "Slurm job 57: PENDING (Resources)"; Stop
// cancels it and the run ends "stopped" once Slurm says so. On the real one-node Slurm of
// scripts/slurm-local.sh (label slurm; skipped with the reason where it cannot start): a 2-task CPU trainer
// job started from the form, its steps in the chart while Slurm runs it, then Stop with a final checkpoint;
// a job submitted by ringmaster-launch (killed afterwards) followed from the Runs tab, then stopped; and a
// job left running when its window closed ("Leave it running on the cluster"), followed again from a new
// window's Runs tab, then killed: cancelled, no task process left. With stubs, the close question offers
// leaving a Slurm job only, and leaving it cancels nothing.
// With RINGMASTER_SCREENSHOT_DIR set, it saves slurm-form.png (the form with "Slurm cluster" chosen).
#include <QAbstractItemView>
#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPainter>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include <memory>

#include <csignal>

#include "ui_test_support.h"
#include "ui/panes/gpu_panel.h"
#include "ui/form/job_form.h"
#include "ui/charts/loss_chart.h"
#include "ui/main_window.h"
#include "supervisor/run_supervisor.h"
#include "ui/runs/runs_model.h"
#include "ui/runs/runs_panel.h"
#include "ui/form/slurm_fields.h"
#include "slurm_fixtures.h"
#include "test_support.h"

using namespace ringmaster;
using namespace ringmaster::ui;
namespace slurmtest = ringmaster::supervisor::slurmtest;
using supervisor::test::LaunchProcess;

using ringmaster::ui::test::statusOf;
using ringmaster::ui::test::refreshAndWait;

namespace {

constexpr int kCheckTimeoutMs = 60000;
constexpr int kRunTimeoutMs = 240000;   // a queued job, then ranks on 2 shared cores
constexpr int kStubAnswerMs = 20000;
constexpr int kSlurmPlace = 1;
constexpr char kRealEntry[] = "ui.tst_slurm_window.real";

// The window with BOX's list open over it (a popup is a window of its own, which grab() leaves out).
void screenshotWithList(QWidget& window, QComboBox* box, const char* name)
{
    const QString dir = qEnvironmentVariable("RINGMASTER_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    box->showPopup();
    QTest::qWait(300);
    QPixmap shot = window.grab();
    QWidget* popup = box->view()->window();
    {
        QPainter painter(&shot);
        painter.drawPixmap(window.mapFromGlobal(popup->mapToGlobal(QPoint(0, 0))), popup->grab());
    }
    box->hidePopup();
    shot.save(dir + QLatin1Char('/') + QLatin1String(name));
}

QString toolTipOf(const RunsPanel& panel, const QString& runDir)
{
    const int row = panel.model()->rowOf(runDir);
    return row < 0 ? QString() : panel.model()->index(row, RunsModel::Status).data(Qt::ToolTipRole).toString();
}

// A run directory as a submission leaves it: job.json with the Slurm job id, and maybe a summary.
QString makeSlurmRun(const QString& root, const QString& name, const QString& jobId, const QByteArray& summary = {})
{
    const QString dir = root + QLatin1Char('/') + name;
    slurmtest::writeFile(dir + QStringLiteral("/job.json"),
                         QStringLiteral(R"({"version": 1, "launch": {"device": "cpu", "nproc": 2, "output_root": "%1",
                                         "slurm": {"nodes": 1, "job_id": "%2"}}, "trainer": {"model": "cnn"}})")
                             .arg(root, jobId).toUtf8());
    if (!summary.isEmpty()) slurmtest::writeFile(dir + QStringLiteral("/summary.json"), summary);
    return dir;
}

// Puts a folder first on PATH for as long as it lives.
struct PathFirst
{
    QByteArray saved = qgetenv("PATH");
    explicit PathFirst(const QString& folder) { qputenv("PATH", folder.toUtf8() + ':' + saved); }
    ~PathFirst() { qputenv("PATH", saved); }
};

QString jobIdIn(const QString& output)
{
    const auto match = QRegularExpression(QStringLiteral("submitted as Slurm job (\\d+)")).match(output);
    return match.hasMatch() ? match.captured(1) : QString();
}

bool queueEmpties(const QString& jobId)
{
    return slurmtest::pollUntil([&] { return slurmtest::queueLine(jobId).isEmpty(); }, slurmtest::kJobDeadlineMs);
}

// Clicks the button named BUTTON (its object name) in the next modal QMessageBox, or cancels it when it has
// none; *seen holds the names of the buttons it offered ("Cancel" for the standard one), sorted, empty when
// none came.
std::shared_ptr<QStringList> clickInNextMessageBox(const QString& button)
{
    auto seen = std::make_shared<QStringList>();
    auto* timer = new QTimer;
    auto elapsed = std::make_shared<QElapsedTimer>();
    elapsed->start();
    QObject::connect(timer, &QTimer::timeout, [timer, seen, elapsed, button] {
        if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) {
            for (QAbstractButton* offered : box->buttons()) {
                *seen << (box->standardButton(offered) == QMessageBox::Cancel ? QStringLiteral("Cancel") : offered->objectName());
            }
            seen->sort();
            if (auto* wanted = box->findChild<QPushButton*>(button)) wanted->click();
            else box->reject();
        } else if (elapsed->elapsed() < kCheckTimeoutMs) {
            return;
        }
        timer->stop();
        timer->deleteLater();
    });
    timer->start(50);
    return seen;
}

// The processes whose command line mentions TEXT (a run's job.json: its srun and its tasks), this one left
// out; with PROGRAM, only those that run it (argv[0]).
QList<qint64> processesMentioning(const QString& text, const QString& program = {})
{
    QList<qint64> pids;
    const QByteArray needle = text.toUtf8();
    for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool numeric = false;
        const qint64 pid = entry.toLongLong(&numeric);
        if (!numeric || pid == QCoreApplication::applicationPid()) continue;
        QFile file(QStringLiteral("/proc/%1/cmdline").arg(entry));
        if (!file.open(QIODevice::ReadOnly)) continue;
        const QByteArray cmdline = file.readAll();
        if (!program.isEmpty() && cmdline.left(cmdline.indexOf('\0')) != program.toUtf8()) continue;
        if (QByteArray(cmdline).replace('\0', ' ').contains(needle)) pids.append(pid);
    }
    return pids;
}

QStringList checkpointsIn(const QString& runDir)
{
    return QDir(runDir + QStringLiteral("/checkpoints")).entryList({QStringLiteral("*.pt")});
}

} // namespace

class TestSlurmWindow : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"); // CPU ranks, even on a GPU box
    }

    void slurmFormGreysOutThisMachinesDevices()
    {
        slurmtest::Stubs stubs;
        stubs.answer("sinfo", "debug*|up|infinite|0/1/0/1|(null)\n"
                              "gpu|up|2-00:00:00|3/4/0/4|gpu:a100:4\n"
                              "long|up|7-00:00:00|12/16/0/16|(null)\n");
        PathFirst path(stubs.path());
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.jobForm()->outputEdit()->setText(m_root.path());
        QVERIFY(window.gpuPanel()->isEnabled());
        window.jobForm()->whereBox()->setCurrentIndex(kSlurmPlace);
        QVERIFY(!window.gpuPanel()->isEnabled());   // the allocation decides the GPUs, not this machine's panel
        QSignalSpy listed(window.jobForm()->slurmFields(), &SlurmFields::partitionsListed);
        QVERIFY(listed.wait(kCheckTimeoutMs));
        QCOMPARE(window.jobForm()->slurmFields()->partitionBox()->count(), 3);
        window.jobForm()->slurmFields()->timeEdit()->setText(QStringLiteral("0-02:00:00"));
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        QVERIFY(window.startAction()->toolTip().contains(QStringLiteral("Slurm")));
        QTRY_VERIFY_WITH_TIMEOUT(!window.jobForm()->isProbing(), kCheckTimeoutMs);
        screenshotWithList(window, window.jobForm()->slurmFields()->partitionBox(), "slurm-form.png");
        window.jobForm()->whereBox()->setCurrentIndex(0);
        QVERIFY(window.gpuPanel()->isEnabled());
    }

    // A run Slurm still holds: "queued" in the Runs tab (with Slurm's word), not deletable; Open follows it
    // in the window; Stop cancels the job, and the run ends "stopped" once Slurm says the job is over.
    void runsTabShowsAndFollowsAQueuedSlurmRun()
    {
        QTemporaryDir root;
        slurmtest::Stubs stubs;
        stubs.answer("squeue", "PENDING|Resources\n");
        PathFirst path(stubs.path());
        const QString queued = makeSlurmRun(root.path(), QStringLiteral("20261130-120000-cnn"), QStringLiteral("57"));
        const QString done = makeSlurmRun(root.path(), QStringLiteral("20261130-110000-cnn"), QStringLiteral("41"),
                                          R"({"status": "completed", "steps": 30})");
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.jobForm()->outputEdit()->setText(root.path());
        RunsPanel* panel = window.runsPanel();
        window.tabs()->setCurrentWidget(panel);
        // A slow squeue never holds the list back: the run is listed first, Slurm's word comes after.
        const QString slow = slurmtest::writeFile(stubs.path() + QStringLiteral("/squeue.sleep"), "3");
        QElapsedTimer clock;
        clock.start();
        QVERIFY(refreshAndWait(*panel, kCheckTimeoutMs));
        QVERIFY2(clock.elapsed() < 2500, "the listing waited for squeue");
        QCOMPARE(statusOf(*panel, queued), QStringLiteral("unknown"));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(*panel, queued), QStringLiteral("queued"), kStubAnswerMs);
        QVERIFY(QFile::remove(slow));
        QVERIFY2(toolTipOf(*panel, queued).contains(QStringLiteral("Slurm job 57: PENDING (Resources)")), qPrintable(toolTipOf(*panel, queued)));
        QCOMPARE(statusOf(*panel, done), QStringLiteral("completed"));
        // Slurm is asked only about the run that has no final status.
        QVERIFY(stubs.args("squeue").contains(QStringLiteral("-j 57")));
        QVERIFY(!stubs.args("squeue").contains(QStringLiteral("41")));
        panel->setConfirmDeletes(false);
        QVERIFY(!panel->deleteRun(queued));
        QVERIFY(QFileInfo::exists(queued + QStringLiteral("/job.json")));

        panel->openRun(queued);
        QCOMPARE(QDir::cleanPath(window.supervisor()->runDir()), QDir::cleanPath(queued));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Starting);
        QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.chart()));
        QTRY_VERIFY_WITH_TIMEOUT(window.stateLabel()->text().contains(QStringLiteral("Slurm job 57: PENDING (Resources)")), kStubAnswerMs);
        QCOMPARE(statusOf(*panel, queued), QStringLiteral("running"));   // the window's own run now
        QVERIFY(window.stopAction()->isEnabled());
        QVERIFY(!window.startAction()->isEnabled());

        window.stopAction()->trigger();   // queued: cancelled (scancel 57)
        QTRY_VERIFY_WITH_TIMEOUT(stubs.args("scancel").trimmed() == QStringLiteral("57"), kStubAnswerMs);
        stubs.answer("squeue", "");
        stubs.answer("scontrol", "JobId=57 JobState=CANCELLED Reason=None ExitCode=0:15\n");
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kStubAnswerMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("stopped")));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(*panel, queued), QStringLiteral("stopped"), kStubAnswerMs);
    }

    // Closing the window while it follows a Slurm job asks whether to stop it, leave it running on the
    // cluster, or cancel; leaving it sends nothing to Slurm (no scancel), lets the run go (the window's
    // supervisor is idle) and closes the window.
    void closingCanLeaveASlurmJobRunning()
    {
        QTemporaryDir root;
        slurmtest::Stubs stubs;
        stubs.answer("squeue", "RUNNING|None\n");
        PathFirst path(stubs.path());
        const QString running = makeSlurmRun(root.path(), QStringLiteral("20261201-090000-cnn"), QStringLiteral("58"));
        MainWindow window;
        window.show();
        window.jobForm()->outputEdit()->setText(root.path());
        QVERIFY(window.attachRun(running));
        QTRY_VERIFY_WITH_TIMEOUT(window.stateLabel()->text().contains(QStringLiteral("Slurm job 58: RUNNING")), kStubAnswerMs);

        // Cancel keeps everything as it was.
        auto offered = clickInNextMessageBox(QStringLiteral("no such button"));
        QVERIFY(!window.close());
        QCOMPARE(*offered, (QStringList{QStringLiteral("Cancel"), QStringLiteral("leaveRunning"), QStringLiteral("stopAndClose")}));
        QVERIFY(window.isVisible());
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Running);

        offered = clickInNextMessageBox(QStringLiteral("leaveRunning"));
        QVERIFY(window.close());
        QVERIFY(offered->contains(QStringLiteral("leaveRunning")));
        QVERIFY(!window.isVisible());
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Idle);
        QVERIFY2(window.banner()->text().contains(QStringLiteral("left running in Slurm job 58 (RUNNING): follow it again with "
                                                                 "ringmaster-launch --attach ") + running),
                 qPrintable(window.banner()->text()));
        QCOMPARE(stubs.args("scancel"), QString());
    }

    // A run on this machine cannot be left running (its ranks die with the app): the question offers no such choice.
    void closingDuringALocalRunOffersNoLeaving()
    {
        MainWindow window;
        window.show();
        window.loadJob(supervisor::test::cpuJob(m_root.path(), 3000, 200));
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        window.startAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(window.supervisor()->state() == supervisor::RunState::Running, kRunTimeoutMs);
        const auto offered = clickInNextMessageBox(QStringLiteral("no such button"));
        QVERIFY(!window.close());
        QCOMPARE(*offered, (QStringList{QStringLiteral("Cancel"), QStringLiteral("stopAndClose")}));
        QVERIFY(window.supervisor()->leaveRunning().isEmpty());
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Running);
        window.killAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kRunTimeoutMs);
    }

    // Start from the form on the real Slurm: a 2-task CPU trainer job, steps in the chart while Slurm runs
    // it, then Stop: every task checkpoints and exits, the run is "stopped".
    void realSlurmRunFromTheWindow()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.loadJob(supervisor::test::cpuJob(m_root.path(), 3000, 200));
        window.jobForm()->whereBox()->setCurrentIndex(kSlurmPlace);
        window.jobForm()->slurmFields()->timeEdit()->setText(QStringLiteral("10"));
        QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
        QCOMPARE(window.jobForm()->slurmFields()->partitionBox()->currentData().toString(), QStringLiteral("debug"));
        QCOMPARE(window.currentJob().worldSize(), 2);
        window.startAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!window.supervisor()->jobId().isEmpty(), kCheckTimeoutMs);
        const QString jobId = window.supervisor()->jobId();
        slurmtest::JobGuard guard{supervisor::SlurmClient(), jobId};
        QTRY_VERIFY_WITH_TIMEOUT(window.stateLabel()->text().contains(QStringLiteral("Slurm job %1: ").arg(jobId)), kCheckTimeoutMs);
        QVERIFY(QTest::qWaitFor([&] { return window.chart()->lossPointCount() >= 3 || supervisor::isFinal(window.supervisor()->state()); },
                                kRunTimeoutMs));
        QVERIFY2(window.chart()->lossPointCount() >= 3, qPrintable(window.stateLabel()->text()));
        QVERIFY2(slurmtest::queueLine(jobId).endsWith(QStringLiteral("RUNNING")), qPrintable(slurmtest::queueLine(jobId)));
        // The label shows Slurm's word from the supervisor's own poll (every second), which may come after the first steps.
        QTRY_VERIFY_WITH_TIMEOUT(window.stateLabel()->text().contains(QStringLiteral("RUNNING")), kCheckTimeoutMs);

        window.stopAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kRunTimeoutMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QVERIFY(window.stateLabel()->text().contains(QStringLiteral("stopped")));
        const QString dir = window.supervisor()->runDir();
        QVERIFY2(!checkpointsIn(dir).isEmpty(), qPrintable(dir));
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        const QJsonObject slurm = slurmtest::readJson(dir + QStringLiteral("/job.json")).value(QStringLiteral("launch")).toObject()
                                      .value(QStringLiteral("slurm")).toObject();
        QCOMPARE(slurm.value(QStringLiteral("job_id")).toString(), jobId);
        QVERIFY(queueEmpties(jobId));
    }

    // A job ringmaster-launch submitted (the launcher killed since) is "running" in the Runs tab; Open
    // follows it live in the Training tab, and Stop stops it.
    void realSlurmAttachFromTheRunsTab()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        QVERIFY(!supervisor::test::launchPath().isEmpty());
        QTemporaryDir root;
        LaunchProcess launcher;
        launcher.start({QStringLiteral("--slurm"), QStringLiteral("--time"), QStringLiteral("10"), QStringLiteral("--trainer"),
                        supervisor::test::trainerPath(), QStringLiteral("--output-root"), root.path(), QStringLiteral("--device"),
                        QStringLiteral("cpu"), QStringLiteral("--nproc"), QStringLiteral("2"), QStringLiteral("--threads"), QStringLiteral("1"),
                        QStringLiteral("--eval-batch-size"), QStringLiteral("5000"), QStringLiteral("--grace-period"), QStringLiteral("20"),
                        QStringLiteral("--epochs"), QStringLiteral("200")});
        QVERIFY2(launcher.waitForOutput(QStringLiteral(" samples/s "), kRunTimeoutMs), qPrintable(launcher.output));
        const QString jobId = jobIdIn(launcher.output);
        slurmtest::JobGuard guard{supervisor::SlurmClient(), jobId};
        const QString dir = QDir::cleanPath(launcher.runDir());
        ::kill(static_cast<pid_t>(launcher.process.processId()), SIGKILL);   // the job runs on without it
        QVERIFY(launcher.finish(30000));

        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.jobForm()->outputEdit()->setText(root.path());
        RunsPanel* panel = window.runsPanel();
        window.tabs()->setCurrentWidget(panel);
        QVERIFY(refreshAndWait(*panel, kCheckTimeoutMs));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(*panel, dir), QStringLiteral("running"), kCheckTimeoutMs);
        QVERIFY(toolTipOf(*panel, dir).contains(QStringLiteral("Slurm job %1: RUNNING").arg(jobId)));

        panel->openRun(dir);
        QCOMPARE(QDir::cleanPath(window.supervisor()->runDir()), dir);
        QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.chart()));
        QCOMPARE(window.supervisor()->jobId(), jobId);
        // The steps so far, then new ones as they come.
        QTRY_VERIFY_WITH_TIMEOUT(window.chart()->lossPointCount() > 0, kCheckTimeoutMs);
        const int shown = window.chart()->lossPointCount();
        QTRY_VERIFY_WITH_TIMEOUT(window.chart()->lossPointCount() > shown + 2, kRunTimeoutMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Running);

        QVERIFY(window.stopAction()->isEnabled());
        window.stopAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kRunTimeoutMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        QVERIFY(!checkpointsIn(dir).isEmpty());
        QVERIFY(queueEmpties(jobId));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(*panel, dir), QStringLiteral("stopped"), kCheckTimeoutMs);
    }

    // A job started from the window, which then closes with "Leave it running on the cluster": the job runs
    // on in Slurm with nothing following it (its steps keep coming into metrics.csv); a new window's Runs
    // tab shows it running, Open follows it, and Kill cancels it (scancel): the run ends "stopped" with
    // Slurm's CANCELLED, no task process is left, and the queue is empty.
    void realSlurmLeaveRunningThenOpenAndKill()
    {
        REQUIRE_SLURM_FOR(kRealEntry);
        QTemporaryDir root;
        slurmtest::JobGuard guard{supervisor::SlurmClient(), QString()};
        QString dir;
        {
            MainWindow window;   // asks on close, as for a user
            window.show();
            window.loadJob(supervisor::test::cpuJob(root.path(), 3000, 200));
            window.jobForm()->whereBox()->setCurrentIndex(kSlurmPlace);
            window.jobForm()->slurmFields()->timeEdit()->setText(QStringLiteral("10"));
            QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
            window.startAction()->trigger();
            QTRY_VERIFY_WITH_TIMEOUT(!window.supervisor()->jobId().isEmpty(), kCheckTimeoutMs);
            guard.jobId = window.supervisor()->jobId();
            dir = QDir::cleanPath(window.supervisor()->runDir());
            QVERIFY(QTest::qWaitFor([&] { return window.chart()->lossPointCount() >= 2 || supervisor::isFinal(window.supervisor()->state()); },
                                    kRunTimeoutMs));
            QVERIFY2(slurmtest::queueLine(guard.jobId).endsWith(QStringLiteral("RUNNING")), qPrintable(slurmtest::queueLine(guard.jobId)));
            const auto offered = clickInNextMessageBox(QStringLiteral("leaveRunning"));
            QVERIFY(window.close());
            QVERIFY(offered->contains(QStringLiteral("leaveRunning")));
            QCOMPARE(window.supervisor()->state(), supervisor::RunState::Idle);
        }
        const QString jobId = guard.jobId;
        // The window is gone; nothing was cancelled and the job trains on.
        QVERIFY2(slurmtest::queueLine(jobId).endsWith(QStringLiteral("RUNNING")), qPrintable(slurmtest::queueLine(jobId)));
        const QString launcherLog = slurmtest::readAll(dir + QStringLiteral("/logs/launcher.log"));
        QVERIFY2(launcherLog.contains(QStringLiteral("left running in Slurm job %1 (RUNNING): follow it again with "
                                                     "ringmaster-launch --attach %2").arg(jobId, dir)),
                 qPrintable(launcherLog.right(2000)));
        QVERIFY(!launcherLog.contains(QStringLiteral("stop requested")) && !launcherLog.contains(QStringLiteral("kill requested")));
        const int rows = supervisor::test::csvRows(dir + QStringLiteral("/metrics.csv"));
        QVERIFY(slurmtest::pollUntil([&] { return supervisor::test::csvRows(dir + QStringLiteral("/metrics.csv")) > rows + 2; }, kRunTimeoutMs));

        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.jobForm()->outputEdit()->setText(root.path());
        RunsPanel* panel = window.runsPanel();
        window.tabs()->setCurrentWidget(panel);
        QVERIFY(refreshAndWait(*panel, kCheckTimeoutMs));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(*panel, dir), QStringLiteral("running"), kCheckTimeoutMs);
        panel->openRun(dir);
        QCOMPARE(window.supervisor()->jobId(), jobId);
        QTRY_VERIFY_WITH_TIMEOUT(window.chart()->lossPointCount() > 0, kCheckTimeoutMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Running);
        const QString jobFile = dir + QStringLiteral("/job.json");
        QCOMPARE(processesMentioning(jobFile, supervisor::test::trainerPath()).size(), 2);   // the two trainer tasks

        QVERIFY(window.killAction()->isEnabled());
        window.killAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(supervisor::isFinal(window.supervisor()->state()), kRunTimeoutMs);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QCOMPARE(slurmtest::readJson(dir + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        const QString log = slurmtest::readAll(dir + QStringLiteral("/logs/launcher.log"));
        QVERIFY2(log.contains(QStringLiteral("kill requested: cancelling Slurm job %1 (scancel)").arg(jobId)), qPrintable(log.right(2000)));
        QVERIFY2(log.contains(QStringLiteral("run stopped (Slurm job %1 CANCELLED)").arg(jobId)), qPrintable(log.right(2000)));
        QVERIFY(queueEmpties(jobId));
        // No task, and no srun either.
        QVERIFY2(slurmtest::pollUntil([&] { return processesMentioning(jobFile).isEmpty(); }, slurmtest::kJobDeadlineMs),
                 qPrintable(QStringLiteral("left: %1").arg(processesMentioning(jobFile).size())));
        QTRY_COMPARE_WITH_TIMEOUT(statusOf(*panel, dir), QStringLiteral("stopped"), kCheckTimeoutMs);
    }
};

QTEST_MAIN(TestSlurmWindow)
#include "tst_slurm_window.moc"
