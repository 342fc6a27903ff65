// The System panel: what every rank used, one metric at a time, one line per rank and the least-median-largest
// band across ranks; live samples and a finished run's system.csv (opened in the Runs tab) draw the same.
#include <QFile>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>

#include "ui_test_support.h"
#include "run_fixture.h"
#include "ui/runs/runs_panel.h"
#include "ui/charts/system_panel.h"
#include "ui/charts/system_series.h"

using namespace ringmaster::ui;
using ringmaster::supervisor::SystemSample;
using ringmaster::runs::test::makeTrainerRun;

using ringmaster::ui::test::screenshot;

namespace {

constexpr int kOpenTimeoutMs = 30000;

QList<SystemSample> tick(double wallTime, const QList<double>& cpuByRank)
{
    QList<SystemSample> samples;
    for (int rank = 0; rank < cpuByRank.size(); ++rank) {
        samples.append({wallTime, rank, QStringLiteral("cpu_percent"), cpuByRank[rank]});
        samples.append({wallTime, rank, QStringLiteral("rss_mib"), 100.0 + rank});
    }
    return samples;
}

} // namespace

class TestSystemPanel : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void theBandIsTheLeastMedianAndLargestAcrossRanks()
    {
        SystemSeries series;
        series.append(tick(1000.0, {90, 10, 50}));
        series.append(tick(1002.0, {80, 20, 60, 40}));
        series.append({{1004.0, 0, QStringLiteral("cpu_percent"), 70}}); // one rank alone: no band at that tick
        QCOMPARE(series.names(), (QStringList{QStringLiteral("cpu_percent"), QStringLiteral("rss_mib")}));
        QCOMPARE(series.ranks(QStringLiteral("cpu_percent")), (QList<int>{0, 1, 2, 3}));
        const SystemSeries::Points rank0 = series.points(QStringLiteral("cpu_percent"), 0);
        QCOMPARE(rank0.seconds, (QVector<double>{0, 2, 4}));  // since the first sample
        QCOMPARE(rank0.values, (QVector<double>{90, 80, 70}));
        const SystemSeries::Band band = series.band(QStringLiteral("cpu_percent"));
        QCOMPARE(band.seconds, (QVector<double>{0, 2}));
        QCOMPARE(band.least, (QVector<double>{10, 20}));
        QCOMPARE(band.median, (QVector<double>{50, 50})); // 10 50 90; 20 40 60 80
        QCOMPARE(band.most, (QVector<double>{90, 80}));
        // A finished run's system.csv, as the runs library names its series; other records are ignored.
        SystemSeries fromFile;
        fromFile.appendRecords({{QStringLiteral("run"), 0, 500.0, QStringLiteral("system/rank1/gpu_util_percent"), 97.0},
                                {QStringLiteral("run"), 0, 500.0, QStringLiteral("loss"), 0.5},
                                {QStringLiteral("run"), 1, 502.0, QStringLiteral("system/rank1/gpu_util_percent"), 95.0}});
        QCOMPARE(fromFile.names(), QStringList{QStringLiteral("gpu_util_percent")});
        QCOMPARE(fromFile.points(QStringLiteral("gpu_util_percent"), 1).values, (QVector<double>{97, 95}));
        QVERIFY(fromFile.band(QStringLiteral("gpu_util_percent")).seconds.isEmpty()); // one rank: no band
    }

    void livePanelDrawsEveryRankAndTheBand()
    {
        SystemPanel panel;
        panel.resize(900, 400);
        QCOMPARE(panel.drawnRanks(), 0);
        for (int i = 0; i < 10; ++i) panel.append(tick(2000.0 + 2 * i, {50.0 + i, 90.0 - i}));
        QTRY_COMPARE_WITH_TIMEOUT(panel.drawnRanks(), 2, 5000); // the coalescing timer drew it
        QCOMPARE(panel.metric(), QStringLiteral("cpu_percent"));
        QCOMPARE(panel.drawnPoints(0), 10);
        QCOMPARE(panel.bandPoints(), 10);
        panel.setMetric(QStringLiteral("rss_mib"));
        QCOMPARE(panel.metric(), QStringLiteral("rss_mib"));
        QCOMPARE(panel.drawnPoints(1), 10);
        panel.append(tick(2020.0, {60, 80}));
        panel.flush();
        QCOMPARE(panel.metric(), QStringLiteral("rss_mib")); // the user's choice stays as samples arrive
        QCOMPARE(panel.drawnPoints(1), 11);
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        screenshot(panel, "system-panel.png");
        panel.clear();
        QCOMPARE(panel.drawnRanks(), 0);
        QVERIFY(panel.metrics().isEmpty());
    }

    void anOpenedRunShowsItsSystemCsv()
    {
        QTemporaryDir root;
        const QString run = makeTrainerRun(root.path(), QStringLiteral("20261203-100000-cnn"), 12, true);
        QFile system(run + QStringLiteral("/system.csv"));
        QVERIFY(system.open(QIODevice::WriteOnly));
        system.write("wall_time,rank,name,value\n"
                     "1796300000.0,0,rss_mib,200\n1796300000.0,1,rss_mib,210\n"
                     "1796300002.0,0,cpu_percent,99.5\n1796300002.0,1,cpu_percent,48\n1796300002.0,0,rss_mib,201\n1796300002.0,1,rss_mib,212\n");
        system.close();
        RunsPanel panel;
        panel.addRoot(root.path());
        QSignalSpy opened(&panel, &RunsPanel::runsOpened);
        panel.openRunsInChart({run});
        QVERIFY(opened.wait(kOpenTimeoutMs));
        SystemPanel* shown = panel.systemPanel();
        QCOMPARE(panel.detailTabs()->tabText(panel.detailTabs()->indexOf(shown)), QStringLiteral("System"));
        QCOMPARE(shown->metrics(), (QStringList{QStringLiteral("cpu_percent"), QStringLiteral("rss_mib")}));
        QCOMPARE(shown->metric(), QStringLiteral("cpu_percent"));
        QCOMPARE(shown->drawnRanks(), 2);
        QCOMPARE(shown->bandPoints(), 1);
        shown->setMetric(QStringLiteral("rss_mib"));
        QCOMPARE(shown->drawnPoints(1), 2);
        QCOMPARE(shown->bandPoints(), 2);
        // A run without system.csv (made before it existed): an empty panel that says why.
        QVERIFY(QFile::remove(run + QStringLiteral("/system.csv")));
        panel.openRunsInChart({run});
        QVERIFY(opened.wait(kOpenTimeoutMs));
        QVERIFY(shown->metrics().isEmpty());
        QCOMPARE(shown->drawnRanks(), 0);
    }
};

QTEST_MAIN(TestSystemPanel)
#include "tst_system_panel.moc"
