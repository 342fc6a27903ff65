// readReportFrame: what a reporting frame says, each integer field checked (a number past an integer's range
// or with a fraction reads as absent, never as a float-to-integer conversion would make it; found by
// tests/fuzz/fuzz_frames.cpp), and the "scalars" frame's value-by-value rules.
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>

#include <cmath>
#include <limits>

#include "../../core/protocol/wire.h"
#include "report_frame.h"

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
        const ReportFrame step = readReportFrame(QJsonObject{{QStringLiteral("v"), 1}, {QStringLiteral("type"), QStringLiteral("step")},
                                                             {QStringLiteral("step"), 9007199254740992.0}, {QStringLiteral("epoch"), 2},
                                                             {QStringLiteral("loss"), 0.25}});
        QVERIFY(step.kind == ReportFrame::Kind::Step);
        QCOMPARE(step.step.step, Q_INT64_C(9007199254740992));
        QCOMPARE(step.step.epoch, qint64(2));
        QCOMPARE(step.step.loss, 0.25);
        QVERIFY(std::isnan(readReportFrame(QJsonObject{{QStringLiteral("type"), QStringLiteral("step")}}).step.loss));
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
