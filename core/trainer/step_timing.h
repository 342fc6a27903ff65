#pragma once
// Where a rank's training steps spend their time, for the supervisor's straggler check. DDP's all-reduce
// makes every rank's step last as long as the slowest one's, so a per-rank step timer cannot tell the slow
// rank from those waiting for it (traceml#252); splitting each step can: the slow rank computes longer, its
// peers wait longer in the all-reduce. A step is split into
//   data       indexing the batch and moving it to the device
//   compute    forward and backward, *excluding* what backward's gradient hooks spend waiting on buckets
//   sync       every wait on the other ranks: buffer broadcast, bucket all-reduces (also those inside
//              backward), the loss all-reduce
//   optimizer  the optimizer step (with the loss scaler's checks)
// StepTimer times one step of the loop; StepTimings (thread-safe) sums the steps between two heartbeats, and
// the heartbeat thread takes their means as the heartbeat's "timing" object (core/protocol/wire.h): no frame
// per step. On a CPU every step is timed (a clock read per part). On a GPU the kernels run behind the host, so
// one step per heartbeat interval is timed, waiting for the compute stream at each part's end (settle); the
// others run untouched.

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>

#include <nlohmann/json.hpp>

namespace ringmaster::trainer {

enum class StepPart { Data, Compute, Sync, Optimizer };

struct StepParts
{
    double data = 0.0; // seconds, as each part below
    double compute = 0.0;
    double sync = 0.0;
    double optimizer = 0.0;
    double& operator[](StepPart part);
};

class StepTimer
{
public:
    using Clock = std::chrono::steady_clock;
    // settle: waits until the device has done what was queued (empty on a CPU, where every step is timed).
    explicit StepTimer(std::function<void()> settle = {});
    // Starts a step; false when this step is not timed (a GPU step between two sampled ones).
    bool begin();
    // Adds the time since the previous lap (or begin) to `part`.
    void lap(StepPart part);
    // Moves time measured as one part to another (bucket waits that happened inside backward: compute -> sync).
    void move(StepPart from, StepPart to, double seconds);
    // The parts of the step begun last; only meaningful when begin() returned true.
    const StepParts& parts() const { return m_parts; }

private:
    std::function<void()> m_settle;
    bool m_timing = false;
    Clock::time_point m_lastLap{};
    Clock::time_point m_lastSampled{};
    StepParts m_parts;
};

class StepTimings
{
public:
    void add(const StepParts& parts);
    // {"steps":N,"data_ms":x,"compute_ms":x,"sync_ms":x,"optimizer_ms":x}: the means of the steps added since
    // the last take; null when none was.
    nlohmann::json take();

private:
    std::mutex m_mutex;
    StepParts m_sum;
    std::int64_t m_steps = 0;
};

// Test hook, inert unless RINGMASTER_TEST_SLOW_RANK is "RANK:MS": that rank sleeps MS milliseconds in each
// step's compute (tests/supervisor/tst_straggler.cpp slows one rank and checks that it, not its peers, is
// named). Zero for every other rank and when unset or malformed.
std::chrono::milliseconds testSlowdownFor(int rank);

} // namespace ringmaster::trainer
