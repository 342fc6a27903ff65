// readReportFrame: what a reporting frame says, each integer field checked (a number past an integer's range
// or with a fraction reads as absent, never as a float-to-integer conversion would make it; found by
// tests/fuzz/fuzz_frames.cpp), and the "scalars" frame's value-by-value rules.
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <limits>

#include "protocol/wire.h"
#include "supervisor/report_frame.h"

using ringmaster::supervisor::ReportFrame;
using ringmaster::supervisor::readReportFrame;

class TestReportFrame : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aGenuineHelloAndStep()
    {
        const ReportFrame hello = readReportFrame(QJsonObject{{QStringLiteral("v"), 1}, {QStringLiteral("type"), QStringLiteral("hello")},
                                                              {QStringLiteral("rank"), 3}, {QStringLiteral("pid"), 4242},
                                                              {QStringLiteral("token"), QStringLiteral("abc")}});
        QCOMPARE(hello.version, qint64(1));
        QVERIFY(hello.kind == ReportFrame::Kind::Hello);
        QCOMPARE(hello.rank, 3);
        QCOMPARE(hello.pid, qint64(4242));
        QCOMPARE(hello.token, QStringLiteral("abc"));
        QVERIFY(hello.host.isEmpty()); // older trainers name no node
        const ReportFrame step = readReportFrame(QJsonObject{{QStringLiteral("v"), 1}, {QStringLiteral("type"), QStringLiteral("step")},
                                                             {QStringLiteral("step"), 9007199254740992.0}, {QStringLiteral("epoch"), 2},
                                                             {QStringLiteral("loss"), 0.25}});
        QVERIFY(step.kind == ReportFrame::Kind::Step);
        QCOMPARE(step.step.step, Q_INT64_C(9007199254740992));
        QCOMPARE(step.step.epoch, qint64(2));
        QCOMPARE(step.step.loss, 0.25);
        QVERIFY(std::isnan(readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("step")}}).step.loss));
    }

    // The hello's node becomes srun's --nodelist=NODE when a hung rank's stacks are taken, and no MAC covers it:
    // only a plain node name is kept.
    void aHellosNodeIsKeptOnlyWhenPlain()
    {
        const auto hostOf = [](const QJsonValue& host) {
            return readReportFrame(QJsonObject{{QStringLiteral("v"), 1}, {QStringLiteral("type"), QStringLiteral("hello")},
                                               {QStringLiteral("rank"), 0}, {QStringLiteral("host"), host}})
                .host;
        };
        QCOMPARE(hostOf(QStringLiteral("node-07.cluster_a")), QStringLiteral("node-07.cluster_a"));
        QCOMPARE(hostOf(QStringLiteral("gpu1")), QStringLiteral("gpu1"));
        for (const QString& bad : {QStringLiteral("-w"), QStringLiteral(".hidden"), QStringLiteral("a b"), QStringLiteral("n1;rm"),
                                   QStringLiteral("n1,n2"), QStringLiteral("n[1-2]"), QString(), QString(254, QLatin1Char('a'))}) {
            QVERIFY2(hostOf(bad).isEmpty(), qPrintable(bad));
        }
        QVERIFY(hostOf(7).isEmpty());
        QCOMPARE(hostOf(QString(253, QLatin1Char('a'))).size(), 253);
    }

    void integersPastTheirRangeReadAsAbsent()
    {
        // A version past int is read as sent (it used to go through a cast to int, undefined there); one past
        // qint64, or with a fraction, is no version: the connection is refused as "protocol version -1".
        QCOMPARE(readReportFrame(QJsonObject{{QStringLiteral("v"), 3333333333.0}}).version, Q_INT64_C(3333333333));
        for (const double version : {1e300, -1e300, 1.5, 9223372036854775808.0}) {
            QCOMPARE(readReportFrame(QJsonObject{{QStringLiteral("v"), version}}).version, qint64(-1));
        }
        QCOMPARE(readReportFrame(QJsonObject{{QStringLiteral("v"), -9223372036854775808.0}}).version,
                 std::numeric_limits<qint64>::min());
        // A rank must be a whole number an int holds; a pid a whole number.
        for (const double rank : {1e300, 4294967296.0, 2147483648.0, 1.5, -1.0}) {
            const ReportFrame hello = readReportFrame(QJsonObject{{QStringLiteral("v"), 1}, {QStringLiteral("type"), QStringLiteral("hello")},
                                                                  {QStringLiteral("rank"), rank}, {QStringLiteral("pid"), 1e300}});
            QCOMPARE(hello.rank, -1);
            QCOMPARE(hello.pid, qint64(0));
        }
        QCOMPARE(readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("hello")}, {QStringLiteral("rank"), 2147483647.0}}).rank,
                 2147483647);
        // Steps and epochs past qint64 read as 0 (as when absent).
        const ReportFrame step = readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("step")},
                                                             {QStringLiteral("step"), 1e19}, {QStringLiteral("epoch"), -1e300}});
        QCOMPARE(step.step.step, qint64(0));
        QCOMPARE(step.step.epoch, qint64(0));
        QCOMPARE(readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("heartbeat")}, {QStringLiteral("step"), 1e300},
                                             {QStringLiteral("phase"), QStringLiteral("train")}}).heartbeatStep, qint64(0));
        QCOMPARE(readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("checkpoint")}, {QStringLiteral("step"), -1e19}})
                     .checkpointStep, qint64(0));
        const ReportFrame eval = readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("eval")},
                                                             {QStringLiteral("step"), 9.3e18}, {QStringLiteral("epoch"), 7}});
        QCOMPARE(eval.eval.step, qint64(0));
        QCOMPARE(eval.eval.epoch, qint64(7));
    }

    // A heartbeat's "usage" (a Slurm rank's own process, recorded in system.csv): only the process metrics' names,
    // only finite values >= 0, and no more CPU than its threads can use.
    void aHeartbeatsUsageKeepsOnlySaneProcessMetrics()
    {
        const auto usageOf = [](const QJsonObject& usage) {
            return readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("heartbeat")}, {QStringLiteral("step"), 3},
                                               {QStringLiteral("usage"), usage}})
                .usage;
        };
        using Usage = QList<QPair<QString, double>>;
        QCOMPARE(usageOf({{QStringLiteral("cpu_percent"), 97.5}, {QStringLiteral("rss_mib"), 250.0}, {QStringLiteral("threads"), 4},
                          {QStringLiteral("disk_read_mib_s"), 0.0}, {QStringLiteral("disk_write_mib_s"), 1.5}}),
                 (Usage{{QStringLiteral("cpu_percent"), 97.5}, {QStringLiteral("rss_mib"), 250.0}, {QStringLiteral("threads"), 4.0},
                        {QStringLiteral("disk_read_mib_s"), 0.0}, {QStringLiteral("disk_write_mib_s"), 1.5}}));
        // Names the rank cannot know of itself (its GPU's are the launcher's to sample) or that do not exist; bad values.
        QCOMPARE(usageOf({{QStringLiteral("gpu_util_percent"), 50.0}, {QStringLiteral("made_up"), 1.0}, {QStringLiteral("rss_mib"), -1.0},
                          {QStringLiteral("threads"), QStringLiteral("4")}, {QStringLiteral("disk_read_mib_s"), std::numeric_limits<double>::infinity()}}),
                 Usage{});
        // 2 threads cannot use more than 2 cores; without a thread count, up to 4096 cores.
        QCOMPARE(usageOf({{QStringLiteral("cpu_percent"), 250.0}, {QStringLiteral("threads"), 2}}),
                 (Usage{{QStringLiteral("threads"), 2.0}}));
        QCOMPARE(usageOf({{QStringLiteral("cpu_percent"), 250.0}}), (Usage{{QStringLiteral("cpu_percent"), 250.0}}));
        QVERIFY(usageOf({}).isEmpty());
        QVERIFY(readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("heartbeat")}, {QStringLiteral("usage"), 5}}).usage.isEmpty());
    }

    void aHeartbeatsTimingIsReadWhenWhole()
    {
        namespace wire = ringmaster::protocol;
        const auto key = [](const char* name) { return QString::fromLatin1(name); };
        const QJsonObject timing{{key(wire::kKeyTimingSteps), 12}, {key(wire::kKeyDataMs), 0.5},
                                 {key(wire::kKeyComputeMs), 41.25}, {key(wire::kKeySyncMs), 3.0},
                                 {key(wire::kKeyOptimizerMs), 2.0}};
        const auto beat = [&](const QJsonValue& value) {
            return readReportFrame(QJsonObject{{key(wire::kKeyType), key(wire::kTypeHeartbeat)}, {key(wire::kKeyStep), 7},
                                               {key(wire::kKeyPhase), QStringLiteral("train")}, {key(wire::kKeyTiming), value}});
        };
        const ReportFrame whole = beat(timing);
        QVERIFY(whole.kind == ReportFrame::Kind::Heartbeat);
        QVERIFY(whole.timing.valid());
        QCOMPARE(whole.timing.steps, qint64(12));
        QCOMPARE(whole.timing.dataMs, 0.5);
        QCOMPARE(whole.timing.computeMs, 41.25);
        QCOMPARE(whole.timing.syncMs, 3.0);
        QCOMPARE(whole.timing.optimizerMs, 2.0);
        // No timing (a script's rank, an evaluation), or a broken one, reads as none: nothing of it is used.
        QVERIFY(!readReportFrame(QJsonObject{{key(wire::kKeyType), key(wire::kTypeHeartbeat)}}).timing.valid());
        QVERIFY(!beat(QStringLiteral("fast")).timing.valid());
        for (const char* part : {wire::kKeyDataMs, wire::kKeyComputeMs, wire::kKeySyncMs, wire::kKeyOptimizerMs}) {
            for (const QJsonValue bad : {QJsonValue(-1.0), QJsonValue(QStringLiteral("1")), QJsonValue()}) {
                QJsonObject broken = timing;
                if (bad.isNull()) broken.remove(key(part));
                else broken.insert(key(part), bad);
                QVERIFY2(!beat(broken).timing.valid(), part);
            }
        }
        for (const double steps : {0.0, -3.0, 1.5, 1e300}) {
            QJsonObject broken = timing;
            broken.insert(key(wire::kKeyTimingSteps), steps);
            QVERIFY(!beat(broken).timing.valid());
        }
    }

    void scalarsAreCheckedValueByValue()
    {
        const ReportFrame frame = readReportFrame(QJsonObject{
            {QStringLiteral("type"), QStringLiteral("scalars")}, {QStringLiteral("step"), 7},
            {QStringLiteral("values"), QJsonObject{{QStringLiteral("acc"), 0.5}, {QStringLiteral("bad\u0001"), 1},
                                                   {QStringLiteral("text"), QStringLiteral("1")}}}});
        QCOMPARE(frame.scalars.step, qint64(7));
        QCOMPARE(frame.scalars.values.size(), 1);
        QCOMPARE(frame.scalars.values.at(0).name, QStringLiteral("acc"));
        QCOMPARE(frame.droppedScalars, qint64(2));
        QVERIFY(!frame.scalarsProblem.isEmpty());
        const ReportFrame noStep = readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("scalars")}, {QStringLiteral("step"), 1e300},
                                                               {QStringLiteral("values"), QJsonObject{{QStringLiteral("a"), 1}}}});
        QVERIFY(noStep.scalars.values.isEmpty());
        QCOMPARE(noStep.droppedScalars, qint64(1));
    }
};

QTEST_GUILESS_MAIN(TestReportFrame)
#include "tst_report_frame.moc"
