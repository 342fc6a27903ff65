// StragglerDetector: the rank that computes slower than the others' median for the whole sustain time is named,
// once, and never the ranks that only wait for it; noise, a short slowdown, a sub-millisecond model and one rank
// alone name nobody. Times are given, so a minute is simulated in microseconds.
#include <QTest>

#include "supervisor/straggler_detector.h"

using ringmaster::supervisor::StepTiming;
using ringmaster::supervisor::StragglerDetector;
using ringmaster::supervisor::StragglerVerdict;

namespace {

StepTiming computing(double computeMs, double syncMs = 1.0)
{
    StepTiming timing;
    timing.steps = 10;
    timing.dataMs = 0.5;
    timing.computeMs = computeMs;
    timing.syncMs = syncMs;
    timing.optimizerMs = 1.0;
    return timing;
}

// One heartbeat a second from every rank, for `seconds`, starting at *now; returns the ranks named, in order.
QList<int> beat(StragglerDetector& detector, const QList<double>& computeMs, int seconds, qint64* now)
{
    QList<int> named;
    for (int second = 0; second < seconds; ++second) {
        *now += 1000;
        for (int rank = 0; rank < computeMs.size(); ++rank) {
            const StragglerVerdict verdict = detector.update(rank, computing(computeMs.at(rank)), *now);
            if (verdict.rank >= 0) named << verdict.rank;
        }
    }
    return named;
}

} // namespace

class TestStragglerDetector : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theSlowRankIsNamedOnceAfterTheSustainTime()
    {
        StragglerDetector detector(60000);
        qint64 now = 0;
        // Rank 2 of four computes 1.5x the others: within the minute nobody is named...
        QVERIFY(beat(detector, {100, 102, 150, 99}, 59, &now).isEmpty());
        QVERIFY(!detector.isStraggler(2));
        // ...then rank 2, only it and only once, however long it stays slow.
        QCOMPARE(beat(detector, {100, 102, 150, 99}, 5, &now), QList<int>{2});
        QVERIFY(detector.isStraggler(2));
        QVERIFY(!detector.isStraggler(0) && !detector.isStraggler(1) && !detector.isStraggler(3));
        QVERIFY(beat(detector, {100, 102, 150, 99}, 120, &now).isEmpty());
        const StragglerVerdict slowest = detector.slowest();
        QCOMPARE(slowest.rank, 2);
        QCOMPARE(slowest.othersMedianMs, 100.0);
        QCOMPARE(slowest.ratio(), 1.5);
    }

    void twoRanksAreComparedWithEachOther()
    {
        // The median of both would be their mean: 1.5x the other is only 1.2x the mean, and would hide it.
        StragglerDetector detector(10000);
        qint64 now = 0;
        const QList<int> named = beat(detector, {100, 150}, 15, &now);
        QCOMPARE(named, QList<int>{1});
        QVERIFY(!detector.isStraggler(0));
    }

    void aRankBackInLineIsForgivenAndNamedAgainOnlyAfterAnotherFullStretch()
    {
        StragglerDetector detector(10000);
        qint64 now = 0;
        QCOMPARE(beat(detector, {100, 160, 100}, 15, &now), QList<int>{1});
        QVERIFY(beat(detector, {100, 100, 100}, 10, &now).isEmpty());
        QVERIFY(!detector.isStraggler(1));
        QVERIFY(beat(detector, {100, 160, 100}, 9, &now).isEmpty()); // slow again, but not yet for 10 s
        QCOMPARE(beat(detector, {100, 160, 100}, 5, &now), QList<int>{1});
    }

    void aShortSlowdownOrAnEvenRunNamesNobody()
    {
        StragglerDetector detector(10000);
        qint64 now = 0;
        // 5 s slow (a checkpoint on that rank's disk, a neighbour's burst), then back: the stretch is broken
        // (the smoothing carries a slowdown a few beats past its end: 5 s of it last 9 beats, under 10 s).
        for (int burst = 0; burst < 5; ++burst) {
            QVERIFY(beat(detector, {100, 200}, 5, &now).isEmpty());
            QVERIFY(beat(detector, {100, 100}, 5, &now).isEmpty());
        }
        // Ranks within 10% of each other, alternating, for ten minutes.
        for (int minute = 0; minute < 10; ++minute) {
            QVERIFY(beat(detector, {100, 110, 105}, 30, &now).isEmpty());
            QVERIFY(beat(detector, {110, 100, 104}, 30, &now).isEmpty());
        }
    }

    void oneNoisyBeatIsSmoothedAway()
    {
        StragglerDetector detector(10000);
        qint64 now = 0;
        for (int second = 0; second < 30; ++second) {
            now += 1000;
            detector.update(0, computing(100), now);
            // Rank 1 computes as fast, but one beat in five is doubled (a page fault storm, a preempted core).
            QCOMPARE(detector.update(1, computing(second % 5 == 4 ? 200 : 100), now).rank, -1);
        }
    }

    void aModelThatComputesInMicrosecondsNamesNobody()
    {
        // 0.45 ms against 0.30 ms is 1.5x, but costs the others 0.15 ms a step: jitter, not a straggler.
        StragglerDetector detector(5000);
        qint64 now = 0;
        QVERIFY(beat(detector, {0.30, 0.45}, 60, &now).isEmpty());
        QCOMPARE(detector.slowest().rank, 1); // still the slowest, as the launcher's line says
    }

    void aLoneRankOrNamingOffNamesNobody()
    {
        StragglerDetector alone(1000);
        qint64 now = 0;
        QVERIFY(beat(alone, {500}, 30, &now).isEmpty());
        QCOMPARE(alone.slowest().rank, -1);
        StragglerDetector off(0);
        QVERIFY(beat(off, {100, 300}, 300, &now).isEmpty());
        QCOMPARE(off.slowest().rank, 1);
    }

    void theLineSaysWhatTheGpuSays()
    {
        const StragglerVerdict verdict{3, 212.04, 130.0};
        QCOMPARE(ringmaster::supervisor::stragglerMessage(verdict, 60, -1, {}),
                 QStringLiteral("rank 3 computes 1.6x slower than the others (212.0 ms a step against their median of 130.0 ms) "
                                "for 60 s; they wait for it in every all-reduce"));
        const QHash<QString, double> hot{{QStringLiteral("gpu_temperature_c"), 83.4}, {QStringLiteral("gpu_sm_clock_mhz"), 1410},
                                         {QStringLiteral("gpu_power_w"), 310.2}, {QStringLiteral("cpu_percent"), 99}};
        QCOMPARE(ringmaster::supervisor::stragglerMessage(verdict, 60, 5, hot),
                 QStringLiteral("rank 3 on GPU 5 computes 1.6x slower than the others (212.0 ms a step against their median of 130.0 ms) "
                                "for 60 s; they wait for it in every all-reduce; GPU 5 at 83 C, SM clock 1410 MHz, 310 W"));
        QVERIFY(ringmaster::supervisor::stragglerMessage(verdict, 60, 5, {}).endsWith(QStringLiteral("every all-reduce")));
    }

    void aBeatWithoutTimingChangesNothing()
    {
        StragglerDetector detector(2000);
        qint64 now = 0;
        beat(detector, {100, 100}, 5, &now);
        QCOMPARE(detector.update(1, StepTiming{}, now + 10000).rank, -1);
        QCOMPARE(detector.slowest().ratio(), 1.0);
        detector.reset();
        QCOMPARE(detector.slowest().rank, -1);
    }
};

QTEST_GUILESS_MAIN(TestStragglerDetector)
#include "tst_straggler_detector.moc"
