// System metrics: a rank's whole process tree is summed from /proc (a busy child counts for its rank), the sampler
// turns readings into rates on its own thread, the fake NVML's power, clock, temperature and PCIe figures reach the
// rank on that GPU, and RUN_DIR/system.csv reads back through the runs library as system/rank<R>/<name> series.
#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>

#include "supervisor/process_usage.h"
#include "protocol/run_layout.h"
#include "supervisor/system_recorder.h"
#include "supervisor/system_sampler.h"
#include "runs/system_table.h"

using namespace ringmaster::supervisor;
namespace metric = ringmaster::supervisor::system_metric;

namespace {

// A shell that starts a child burning one core and a sleeping one, then waits: the busy work is not the root's.
struct BusyTree
{
    QProcess shell;
    BusyTree()
    {
        shell.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("while :; do :; done & sleep 60 & wait")});
        shell.waitForStarted();
    }
    ~BusyTree()
    {
        // The children are not the shell's process group leader's to take along: kill the tree by parentage.
        QProcess::execute(QStringLiteral("/usr/bin/pkill"), {QStringLiteral("-KILL"), QStringLiteral("-P"), QString::number(shell.processId())});
        shell.kill();
        shell.waitForFinished();
    }
};

QList<SystemSample> named(const QList<QList<SystemSample>>& ticks, const char* name, int rank = 0)
{
    QList<SystemSample> found;
    for (const auto& tick : ticks) {
        for (const SystemSample& sample : tick) {
            if (sample.name == QLatin1String(name) && sample.rank == rank) found.append(sample);
        }
    }
    return found;
}

} // namespace

class TestSystemSampler : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aRanksTreeIsSummed()
    {
        BusyTree tree;
        const qint64 root = tree.shell.processId();
        QVERIFY(QTest::qWaitFor([&] { return proc::treeUsage({root}).value(root).processes >= 3; }, 5000));
        const auto first = proc::treeUsage({root}).value(root);
        QTest::qWait(500);
        const auto later = proc::treeUsage({root, 999999999}); // a root that does not exist is absent
        QVERIFY(!later.contains(999999999));
        const auto usage = later.value(root);
        QCOMPARE(usage.processes, 3);        // the shell, the busy loop (a subshell) and sleep
        QVERIFY(usage.threads >= 3);
        QVERIFY(usage.rssKiB > 0);
        // The busy child's CPU time is the rank's: about half a second of it in half a second.
        QVERIFY2(usage.cpuSeconds - first.cpuSeconds > 0.1, qPrintable(QString::number(usage.cpuSeconds - first.cpuSeconds)));
        // A kernel without /proc/PID/task/TID/children gets the scan of every process's parent: the same tree.
        const auto scanned = proc::treeUsage({root}, proc::TreeWalk::ParentScan).value(root);
        QCOMPARE(scanned.processes, 3);
        QCOMPARE(scanned.threads, usage.threads);
        QVERIFY(scanned.cpuSeconds >= usage.cpuSeconds);
    }

    void theSamplerGivesRatesOffItsThread()
    {
        BusyTree tree;
        QVERIFY(QTest::qWaitFor([&] { return proc::treeUsage({tree.shell.processId()}).value(tree.shell.processId()).processes >= 3; }, 5000));
        SystemSampler sampler(200);
        QList<QList<SystemSample>> ticks;
        QThread* sampledOn = nullptr;
        connect(&sampler, &SystemSampler::sampled, this, [&](const QList<SystemSample>& samples) { ticks.append(samples); });
        connect(&sampler, &SystemSampler::sampled, &sampler, [&] { sampledOn = QThread::currentThread(); }, Qt::DirectConnection);
        sampler.setRanks({{3, tree.shell.processId(), -1}});
        QVERIFY(QTest::qWaitFor([&] { return ticks.size() >= 5; }, 10000));
        QVERIFY(sampledOn != nullptr && sampledOn != QThread::currentThread()); // never the GUI's thread
        QVERIFY(named(ticks, metric::kCpuPercent, 0).isEmpty()); // rank 3's, not rank 0's
        const QList<SystemSample> cpu = named(ticks, metric::kCpuPercent, 3);
        QCOMPARE(cpu.size(), ticks.size() - 1); // the first tick has no rate
        double most = 0;
        for (const SystemSample& sample : cpu) most = std::max(most, sample.value);
        QVERIFY2(most > 40 && most < 130, qPrintable(QString::number(most))); // one busy core: about 100
        QCOMPARE(named(ticks, metric::kThreads, 3).last().value, 3.0);
        QVERIFY(named(ticks, metric::kRssMiB, 3).last().value > 0);
        QCOMPARE(named(ticks, metric::kDiskWriteMiBps, 3).size(), cpu.size());
        QVERIFY(named(ticks, metric::kGpuUtilPercent, 3).isEmpty()); // a CPU rank has no GPU rows
        QVERIFY(sampler.ticks() >= 5);
        QVERIFY(sampler.cpuSecondsUsed() > 0);
        // Paused: no more ticks.
        sampler.setRanks({});
        QTest::qWait(100);
        const qsizetype paused = ticks.size();
        QTest::qWait(600);
        QCOMPARE(ticks.size(), paused);
    }

    void aGpuRanksFiguresComeFromNvml()
    {
        const QByteArray fake = qgetenv("RINGMASTER_FAKE_NVML");
        if (fake.isEmpty()) QSKIP("RINGMASTER_FAKE_NVML is not set (ctest sets it)");
        qputenv("RINGMASTER_NVML_LIBRARY", fake);
        SystemSampler sampler(200);
        QList<QList<SystemSample>> ticks;
        connect(&sampler, &SystemSampler::sampled, this, [&](const QList<SystemSample>& samples) { ticks.append(samples); });
        sampler.setRanks({{1, QCoreApplication::applicationPid(), 2}});
        QVERIFY(QTest::qWaitFor([&] { return !ticks.isEmpty(); }, 10000));
        qunsetenv("RINGMASTER_NVML_LIBRARY");
        // The fake's GPU 2: 120 W, SM clock 1390 MHz, 42 degrees, 3 GiB used, 3000 KB/s each way over PCIe.
        QCOMPARE(named(ticks, metric::kGpuPowerW, 1).first().value, 120.0);
        QCOMPARE(named(ticks, metric::kGpuSmClockMHz, 1).first().value, 1390.0);
        QCOMPARE(named(ticks, metric::kGpuTemperatureC, 1).first().value, 42.0);
        QCOMPARE(named(ticks, metric::kGpuMemoryMiB, 1).first().value, 3072.0);
        QCOMPARE(named(ticks, metric::kGpuUtilPercent, 1).first().value, 0.0);
        QCOMPARE(named(ticks, metric::kGpuPcieTxMiBps, 1).first().value, 3000.0 / 1024.0);
        QCOMPARE(named(ticks, metric::kGpuPcieRxMiBps, 1).first().value, 3000.0 / 1024.0);
    }

    void systemCsvReadsBackAsSeries()
    {
        QTemporaryDir dir;
        {
            SystemRecorder recorder;
            QVERIFY2(recorder.open(dir.path()), qPrintable(recorder.error()));
            QVERIFY(recorder.append({{1796300000.25, 0, QStringLiteral("cpu_percent"), 97.5}, {1796300000.25, 1, QStringLiteral("cpu_percent"), 12.125}}));
            QVERIFY(recorder.append({{1796300002.25, 0, QStringLiteral("cpu_percent"), 99.0}}));
        }
        // A run killed mid-row, then resumed: the cut row is reported, the header is not written twice.
        QFile file(dir.filePath(QLatin1String(ringmaster::protocol::kSystemFile)));
        QVERIFY(file.open(QIODevice::Append));
        file.write("1796300003.0,1,cpu_perc");
        file.close();
        {
            SystemRecorder recorder;
            QVERIFY(recorder.open(dir.path()));
            QVERIFY(recorder.append({{1796300004.5, 1, QStringLiteral("rss_mib"), 812.0}}));
        }
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray text = file.readAll();
        QCOMPARE(text.count("wall_time,rank,name,value"), 1);
        const ringmaster::runs::ScalarTable table = ringmaster::runs::readRunSystem(dir.path());
        QCOMPARE(table.records.size(), 4);
        QCOMPARE(table.problems.size(), 1);
        QCOMPARE(table.records.at(0).name, QStringLiteral("system/rank0/cpu_percent"));
        QCOMPARE(table.records.at(0).step, qint64(0));
        QCOMPARE(*table.records.at(0).wallTime, 1796300000.25);
        QCOMPARE(table.records.at(0).value, 97.5);
        QCOMPARE(table.records.at(1).name, QStringLiteral("system/rank1/cpu_percent"));
        QCOMPARE(table.records.at(1).value, 12.125);
        QCOMPARE(table.records.at(2).name, QStringLiteral("system/rank0/cpu_percent"));
        QCOMPARE(table.records.at(2).step, qint64(1)); // the second sample of that series
        QCOMPARE(table.records.at(3).name, QStringLiteral("system/rank1/rss_mib"));
        QCOMPARE(table.records.at(3).step, qint64(0));
        QVERIFY(ringmaster::runs::readRunSystem(QDir::tempPath() + QStringLiteral("/no-such-run")).records.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestSystemSampler)
#include "tst_system_sampler.moc"
