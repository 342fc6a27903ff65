#pragma once
// Names the rank that slows a data-parallel run down. DDP's all-reduce makes every rank's step as long as the
// slowest one's, so the ranks are compared on their compute time alone (forward and backward without the
// waits on gradient buckets; core/trainer/step_timing.h): the slow rank computes longer, the others only wait
// longer. Each heartbeat brings a rank's mean compute time per step since the previous one; the detector
// smooths it over a few beats (an exponential mean, kSmoothing) and compares each rank with the median of the
// *other* ranks (with two ranks, the other one; the median of all would hide a slow rank of two). A rank
// whose smoothed compute stays above kRatio times that median, and at least kMinExcessMs above it, for the
// whole `sustainMs` is named once; it is named again only after it was back under. The floor keeps a
// model whose steps compute in a fraction of a millisecond (where scheduling jitter alone moves a rank by
// half) from naming anybody: a rank that costs its peers less than a millisecond a step is not worth a word. Pure: times come in as arguments, so it is tested
// without waiting a minute.

#include <QHash>
#include <QString>
#include <QtGlobal>

#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

struct StragglerVerdict
{
    int rank = -1;               // -1: nobody newly named
    double computeMs = 0.0;      // its smoothed compute time per step
    double othersMedianMs = 0.0; // the median of the other ranks' smoothed compute times
    double ratio() const { return othersMedianMs > 0 ? computeMs / othersMedianMs : 0.0; }
};

// The line that names a straggler: "rank 1 on GPU 3 computes 1.6x slower than the others (212.0 ms a step against
// their median of 130.0 ms) for 60 s; they wait for it in every all-reduce; GPU 3 at 83 C, SM clock 1410 MHz,
// 310 W". gpu -1 for a CPU rank; gpuNow: the rank's latest system sample by name (system_sampler.h), what of
// temperature, SM clock and power it holds is said (a hot, throttled GPU is the usual reason).
QString stragglerMessage(const StragglerVerdict& verdict, double afterSec, int gpu, const QHash<QString, double>& gpuNow);

class StragglerDetector
{
public:
    static constexpr double kRatio = 1.2;
    static constexpr double kMinExcessMs = 1.0;
    static constexpr double kSmoothing = 0.3; // weight of the newest beat
    static constexpr qint64 kDefaultSustainMs = 60000;

    explicit StragglerDetector(qint64 sustainMs = kDefaultSustainMs) : m_sustainMs(sustainMs) {}
    // 0 turns naming off (the timings are still kept for slowest()).
    void setSustainMs(qint64 sustainMs) { m_sustainMs = sustainMs; }
    // Forgets every rank (a new launch: its ranks are new processes).
    void reset() { m_ranks.clear(); }

    // A rank's heartbeat timing at nowMs (any monotonic clock). Returns the rank newly named by this beat, if any.
    StragglerVerdict update(int rank, const StepTiming& timing, qint64 nowMs);
    // Named and not back under the ratio since.
    bool isStraggler(int rank) const;
    // The rank with the longest smoothed compute time and how it compares with the others' median, when at
    // least two ranks have timings; rank -1 otherwise. For the Ranks tab and the launcher's line.
    StragglerVerdict slowest() const;

private:
    struct RankTrack
    {
        double computeMs = 0.0;
        qint64 slowSinceMs = -1; // above the ratio since then; -1 when not
        bool named = false;
    };
    double othersMedian(int rank) const;

    qint64 m_sustainMs;
    QHash<int, RankTrack> m_ranks;
};

} // namespace ringmaster::supervisor
