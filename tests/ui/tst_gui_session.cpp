// The desktop app (offscreen, the real MainWindow and real trainers) facing the end of its own session:
// the window closed mid-run, the window destroyed mid-run, the app process killed with SIGKILL (the run is
// listed "interrupted"), and many short runs in a row from one window,
// with the process's descriptors, threads and memory measured. After each: every pid the window showed
// is gone, no ringmaster process of the test is left, no partial file remains, and summary.json says
// how the run ended. RINGMASTER_GUI_SESSION_RUNS sets how many runs in a row (default kDefaultRuns, about
// 2 s each: 100 took 233 s on the shared 2-core machine under a load of 4-5).
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QLabel>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "ui_test_support.h"
#include "ui/main_window.h"
#include "ui/panes/rank_table.h"
#include "runs/run_listing.h"
#include "supervisor/run_supervisor.h"
#include "test_support.h"

using namespace ringmaster;
using namespace ringmaster::ui;
using namespace ringmaster::supervisor::test;

using ringmaster::ui::test::waitForFinal;

namespace {

constexpr int kRunTimeoutMs = 180000;
constexpr int kCheckTimeoutMs = 60000; // the output-folder check and pre-flight run off the GUI thread
constexpr int kDefaultRuns = 15;
constexpr int kWarmUpRuns = 5;
// Growth allowed between the end of the warm-up and the end of the last run. Measured: after 100 runs
// descriptors +0, threads +0, resident memory +3.9 MiB (the Runs tab lists every new run; the launcher's
// log tab fills towards its 5,000 lines); after 15-20 runs +0, +0, +0.3..2 MiB. Threads may differ by an
// idle worker of Qt's thread pool (pre-flight, the Runs tab's listing), which expires after 30 s.
constexpr int kMaxFdGrowth = 2;
constexpr int kMaxThreadGrowth = 2;
constexpr qint64 kMaxRssGrowthKiB = 16 * 1024;

// A 2-rank run of the mlp that goes on until it is stopped (20 epochs), checkpointing every 10 steps.
supervisor::JobSpec longJob(const QString& root)
{
    supervisor::JobSpec job = cpuJob(root, 0, 20);
    job.setTrainerOption(QStringLiteral("model"), QStringLiteral("mlp"));
    job.setTrainerOption(QStringLiteral("batch-size"), 32);
    job.setTrainerOption(QStringLiteral("val-split"), 0.01);
    job.setTrainerOption(QStringLiteral("checkpoint-every"), 10);
    return job;
}

// The smallest real run: 1 rank, the linear model on 256 synthetic samples, 2 steps.
supervisor::JobSpec tinyJob(const QString& root)
{
    supervisor::JobSpec job = cpuJob(root, 2);
    job.nproc = 1;
    job.setTrainerOption(QStringLiteral("model"), QStringLiteral("linear"));
    job.setTrainerOption(QStringLiteral("data"), QStringLiteral("synthetic"));
    job.setTrainerOption(QStringLiteral("synthetic-samples"), 256);
    job.setTrainerOption(QStringLiteral("batch-size"), 32);
    return job;
}

void startFrom(MainWindow& window, const supervisor::JobSpec& job)
{
    window.setConfirmOnClose(false);
    window.show();
    window.loadJob(job);
    QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
    window.startAction()->trigger();
}

// The pids in the window's Ranks tab, once it shows one for every rank.
QList<qint64> shownPids(MainWindow& window)
{
    QList<qint64> pids;
    (void)QTest::qWaitFor([&] {
        pids.clear();
        for (int rank = 0; rank < window.supervisor()->job().worldSize(); ++rank) {
            const qint64 pid = window.rankTable()->cell(rank, RankTable::kPid).toLongLong();
            if (pid > 0) pids.append(pid);
        }
        return pids.size() == window.supervisor()->job().worldSize();
    }, 10000);
    return pids;
}

int entries(const char* folder)
{
    return static_cast<int>(QDir(QLatin1String(folder)).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System).size());
}

qint64 residentKiB()
{
    for (const QString& line : readAll(QStringLiteral("/proc/self/status")).split(QLatin1Char('\n'))) {
        if (line.startsWith(QLatin1String("VmRSS:"))) return line.section(QLatin1Char(' '), 1, -1, QString::SectionSkipEmpty).section(QLatin1Char(' '), 0, 0).toLongLong();
    }
    return -1;
}

struct Usage
{
    int fds = 0;
    int threads = 0;
    qint64 rssKiB = 0;
};

Usage usage()
{
    QCoreApplication::processEvents();
    return Usage{entries("/proc/self/fd"), entries("/proc/self/task"), residentKiB()};
}

} // namespace

class TestGuiSession : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("RINGMASTER_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1"); // CPU ranks, even on a GPU box
        QVERIFY(!trainerPath().isEmpty());
    }

    // Closing the window mid-run (no confirmation asked) stops the run gracefully, then the window goes.
    void closingTheWindowMidRunStopsTheRun()
    {
        const QString root = m_root.filePath(QStringLiteral("close"));
        QVERIFY(QDir().mkpath(root));
        MainWindow window;
        startFrom(window, longJob(root));
        QVERIFY(QTest::qWaitFor([&] { return window.supervisor()->stepsReceived() >= 15; }, kRunTimeoutMs));
        const QList<qint64> pids = shownPids(window);
        QCOMPARE(pids.size(), 2);
        for (const qint64 pid : pids) QVERIFY(pid > 0 && !processGone(pid));
        const QString dir = window.supervisor()->runDir();
        QVERIFY(window.close() == false); // kept open while the ranks write their final checkpoint
        QVERIFY(QTest::qWaitFor([&] { return !window.isVisible(); }, 60000));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        for (const qint64 pid : pids) QVERIFY(processGone(pid));
        QCOMPARE(ringmasterProcesses(root), QList<qint64>());
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        const int steps = summary.value(QStringLiteral("steps")).toInt();
        QVERIFY(steps >= 15);
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/checkpoints/step-%1.pt").arg(steps, 8, 10, QLatin1Char('0'))));
        QCOMPARE(tempFilesUnder(dir), QStringList());
    }

    // Destroying the window mid-run (the app quitting without the close dialog): every rank the window
    // showed is killed and reaped before the destructor returns, and summary.json says "stopped" and why.
    void destroyingTheWindowMidRunKillsEveryRank()
    {
        const QString root = m_root.filePath(QStringLiteral("destroy"));
        QVERIFY(QDir().mkpath(root));
        auto* window = new MainWindow;
        startFrom(*window, longJob(root));
        QVERIFY(QTest::qWaitFor([&] { return window->supervisor()->stepsReceived() >= 15; }, kRunTimeoutMs));
        const QList<qint64> pids = shownPids(*window);
        QCOMPARE(pids.size(), 2);
        for (const qint64 pid : pids) QVERIFY(pid > 0 && !processGone(pid));
        const QString dir = window->supervisor()->runDir();
        delete window;
        for (const qint64 pid : pids) QVERIFY2(processGone(pid), qPrintable(QString::number(pid)));
        QCOMPARE(ringmasterProcesses(root), QList<qint64>());
        const QJsonObject summary = readJson(dir + QStringLiteral("/summary.json"));
        QCOMPARE(summary.value(QStringLiteral("status")).toString(), QStringLiteral("stopped"));
        QVERIFY2(summary.value(QStringLiteral("message")).toString().contains(QStringLiteral("closed while the run was running")),
                 qPrintable(summary.value(QStringLiteral("message")).toString()));
        QCOMPARE(tempFilesUnder(dir), QStringList());
    }

    // The app process killed with SIGKILL mid-run (no destructor runs): its ranks die with it (PDEATHSIG), and
    // the run, "running" until then, is listed "interrupted" rather than keeping no status.
    void killingTheAppLeavesAnInterruptedRun()
    {
        const QString app = qEnvironmentVariable("RINGMASTER_GUI");
        QVERIFY2(QFile::exists(app), "RINGMASTER_GUI names the built ringmaster");
        const QString root = m_root.filePath(QStringLiteral("sigkill"));
        const QString home = m_root.filePath(QStringLiteral("sigkill-home"));
        QVERIFY(QDir().mkpath(root) && QDir().mkpath(home + QStringLiteral("/runtime")));
        QFile::setPermissions(home + QStringLiteral("/runtime"), QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        const QString jobFile = home + QStringLiteral("/long.ringmaster.json");
        longJob(root).save(jobFile);

        QProcess process;
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        environment.insert(QStringLiteral("HOME"), home);
        environment.insert(QStringLiteral("XDG_CONFIG_HOME"), home + QStringLiteral("/.config"));
        environment.insert(QStringLiteral("XDG_RUNTIME_DIR"), home + QStringLiteral("/runtime"));
        environment.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        process.setProcessEnvironment(environment);
        process.start(app, {jobFile, QStringLiteral("--start")});
        QVERIFY(process.waitForStarted());
        QString dir;
        QVERIFY(QTest::qWaitFor([&] {
            const auto runs = QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
            dir = runs.isEmpty() ? QString() : root + QLatin1Char('/') + runs.first();
            return !dir.isEmpty() && trainerPids(dir).size() == 2 && QFileInfo::exists(dir + QStringLiteral("/metrics.csv"));
        }, kRunTimeoutMs));
        const QList<qint64> pids = trainerPids(dir);
        QCOMPARE(runs::listRuns({root}).value(0).status, QStringLiteral("running"));

        QCOMPARE(::kill(static_cast<pid_t>(process.processId()), SIGKILL), 0);
        QVERIFY(process.waitForFinished(10000));
        QVERIFY(QTest::qWaitFor([&] { return processGone(pids.at(0)) && processGone(pids.at(1)); }, 10000));
        QCOMPARE(ringmasterProcesses(root), QList<qint64>());
        const auto listed = runs::listRuns({root});
        QCOMPARE(listed.size(), 1);
        QCOMPARE(listed.first().status, QStringLiteral("interrupted"));
    }

    // Many short runs from one window: each completes and leaves no process; after a warm-up, the
    // process's descriptors, threads and resident memory stay within the bounds above.
    void manyRunsInOneSession()
    {
        bool given = false;
        const int runs = qEnvironmentVariable("RINGMASTER_GUI_SESSION_RUNS").toInt(&given);
        const int total = given && runs > kWarmUpRuns ? runs : kDefaultRuns;
        const QString root = m_root.filePath(QStringLiteral("session"));
        QVERIFY(QDir().mkpath(root));
        MainWindow window;
        window.setConfirmOnClose(false);
        window.show();
        window.loadJob(tinyJob(root));
        QElapsedTimer clock;
        clock.start();
        Usage warm;
        for (int run = 1; run <= total; ++run) {
            QTRY_VERIFY_WITH_TIMEOUT(window.startAction()->isEnabled(), kCheckTimeoutMs);
            const QString previous = window.supervisor()->runDir();
            window.startAction()->trigger();
            // The previous run's final state holds until pre-flight is over and the new run has started.
            QVERIFY(QTest::qWaitFor([&] { return window.supervisor()->runDir() != previous || !window.isCheckingStart(); }, kCheckTimeoutMs));
            QVERIFY2(window.supervisor()->runDir() != previous, qPrintable(window.banner()->text()));
            QVERIFY(waitForFinal(window, kRunTimeoutMs));
            QVERIFY2(window.supervisor()->state() == supervisor::RunState::Completed,
                     qPrintable(QStringLiteral("run %1: %2").arg(run).arg(window.supervisor()->rootCause().summary())));
            for (const auto& rank : window.supervisor()->ranks()) QVERIFY(processGone(rank.pid));
            QCOMPARE(ringmasterProcesses(root), QList<qint64>());
            QCOMPARE(readJson(window.supervisor()->runDir() + QStringLiteral("/summary.json")).value(QStringLiteral("status")).toString(),
                     QStringLiteral("completed"));
            if (run == kWarmUpRuns) warm = usage();
        }
        const Usage last = usage();
        qInfo("%d runs in %.1f s; after run %d: %d fds, %d threads, %lld KiB resident; after run %d: %d fds, %d threads, "
              "%lld KiB resident (%+d fds, %+d threads, %+lld KiB)",
              total, static_cast<double>(clock.elapsed()) / 1000.0, kWarmUpRuns, warm.fds, warm.threads, warm.rssKiB, total,
              last.fds, last.threads, last.rssKiB, last.fds - warm.fds, last.threads - warm.threads, last.rssKiB - warm.rssKiB);
        QCOMPARE(QDir(root).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size(), total);
        QVERIFY2(last.fds - warm.fds <= kMaxFdGrowth, "file descriptors leak");
        QVERIFY2(last.threads - warm.threads <= kMaxThreadGrowth, "threads leak");
        QVERIFY2(last.rssKiB - warm.rssKiB <= kMaxRssGrowthKiB, "resident memory grows");
    }
};

QTEST_MAIN(TestGuiSession)
#include "tst_gui_session.moc"
