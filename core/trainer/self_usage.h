#pragma once
// What this rank's own process uses, for its heartbeat's "usage" (core/protocol/wire.h): CPU (100 = one core),
// resident memory, threads, and storage reads and writes, under system.csv's names (core/protocol/run_layout.h).
// The launcher samples local ranks itself, from their /proc; a Slurm rank on another node can only say it
// itself, so the launcher records what the heartbeats carry there. Read from getrusage and /proc/self: a few
// small reads every kUsageIntervalMs on the heartbeat thread, never on the training loop.

#include <chrono>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace ringmaster::trainer {

class SelfUsage
{
public:
    using Clock = std::chrono::steady_clock;

    // The "usage" object, or null when the previous one was less than protocol::kUsageIntervalMs ago. Rates come
    // from the previous reading, so the first object has only rss_mib and threads. A value that cannot be read
    // (a /proc without io, as in some containers) is left out. Call from one thread.
    nlohmann::json take(Clock::time_point now = Clock::now());

private:
    bool m_hasPrevious = false;
    Clock::time_point m_previousAt;
    double m_previousCpuSeconds = 0.0;
    std::int64_t m_previousReadBytes = -1;  // -1: unknown
    std::int64_t m_previousWriteBytes = -1;
};

} // namespace ringmaster::trainer
