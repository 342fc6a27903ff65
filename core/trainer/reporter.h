#pragma once
// Streams frames to the supervisor's local socket, or to its TCP endpoint when the socket is absent or
// refuses (a rank on another Slurm node; core/protocol/wire.h), without ever blocking
// training: frames go into a bounded queue (kQueueCapacity) that a background thread drains; when a
// slow reader lets the queue fill, the oldest frames are dropped (counted in dropped()). A heartbeat
// timer thread sends {"type":"heartbeat","step","phase","timing","usage"} every protocol::kHeartbeatIntervalMs, reading
// the step and phase that the training loop publishes with setProgress(), so a step, an evaluation or
// a checkpoint longer than the supervisor's heartbeat timeout never looks like a hang. The beats mean
// progress, not just a live process: once the loop has published nothing for the stall limit (a
// thread stuck in a dead file system, a deadlock), they stop, and the supervisor's heartbeat timeout
// then names the rank as hung. The socket is non-blocking: on exit, what is queued gets at most
// kExitDeadline to go out, even when the reader stopped reading. If the socket is absent or dies,
// training continues; metrics.csv stays the durable record.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "trainer/self_usage.h"
#include "trainer/step_timing.h"

namespace ringmaster::trainer {

// What a rank is doing, as heartbeats name it.
enum class Phase { Loading, Rendezvous, Train, Eval, Checkpoint, Done };
const char* phaseName(Phase phase);

class Reporter
{
public:
    static constexpr std::size_t kQueueCapacity = 8192;
    static constexpr std::chrono::milliseconds kExitDeadline{1000};

    // Null when neither RINGMASTER_SOCKET nor RINGMASTER_ENDPOINT is set (run by hand or by torchrun).
    static std::unique_ptr<Reporter> fromEnvironment(int rank);

    // socketPath and endpoint ("HOST:PORT") may each be empty; the socket is tried first.
    Reporter(std::string socketPath, std::string token, int rank, std::string endpoint = {});
    ~Reporter(); // stops the heartbeats, sends what is queued within kExitDeadline, then closes
    Reporter(const Reporter&) = delete;
    Reporter& operator=(const Reporter&) = delete;

    // Adds the protocol version and queues the frame; never blocks on the socket.
    void send(nlohmann::json frame);
    // Publishes the loop's position for the heartbeat timer; a change of phase is reported at once.
    void setProgress(std::int64_t step, Phase phase);
    // Heartbeats stop after this long without setProgress() (zero: never). Set before training.
    void setStallLimit(std::chrono::milliseconds limit) { m_stallLimitMs.store(limit.count()); }
    std::uint64_t dropped() const { return m_dropped.load(); }
    // One timed training step's parts; the next heartbeat carries the means (step_timing.h).
    void addStepTiming(const StepParts& parts) { m_timings.add(parts); }

private:
    void writerLoop();
    void heartbeatLoop();
    // withUsage: from the heartbeat thread only, which alone reads m_usage (a phase change's beat comes from the
    // training thread and carries none).
    void sendHeartbeat(bool withUsage = false);
    // Connects (socket, else endpoint) and says hello; false when neither takes it.
    bool connectSocket();
    bool connectUnix();
    bool connectTcp();
    // The supervisor's first line over TCP: its nonce, into m_nonce; false when none came in time.
    bool readChallenge();
    // Over TCP each line goes as "<MAC> <frame>" (protocol/frame_mac.h); on the socket as it is.
    std::string sealed(const std::string& line);
    // What the frames go to, for messages: the socket's path or "tcp HOST:PORT".
    std::string peerName() const;
    // False when the socket failed, or when closing and kExitDeadline has passed.
    bool writeAll(const std::string& bytes);
    bool pastExitDeadline() const;

    std::string m_socketPath;
    std::string m_endpoint;
    bool m_overTcp = false;
    std::string m_token;
    std::string m_nonce;            // TCP: this connection's challenge (writer thread only)
    std::uint64_t m_sequence = 0;   // TCP: the last frame's sequence number (writer thread only)
    int m_rank;
    int m_fd = -1;
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;          // writer: frames queued or closing
    std::condition_variable m_heartbeatWake; // timer: closing
    std::deque<std::string> m_queue;
    bool m_closing = false;                                  // guarded by m_mutex
    std::chrono::steady_clock::time_point m_exitDeadline{}; // guarded by m_mutex, set with m_closing
    std::atomic<std::uint64_t> m_dropped{0};
    std::atomic<std::int64_t> m_step{0};
    std::atomic<Phase> m_phase{Phase::Loading};
    std::atomic<std::int64_t> m_lastProgressMs{0};   // steady clock, when setProgress() last ran
    std::atomic<std::int64_t> m_stallLimitMs{0};
    StepTimings m_timings;
    SelfUsage m_usage; // heartbeat thread only
    std::thread m_writer;
    std::thread m_heartbeats;
};

} // namespace ringmaster::trainer
