#pragma once
// Streams frames to the supervisor's local socket (core/protocol/wire.h) without ever blocking
// training: frames go into a bounded queue that a background thread drains. Overflow policy:
// kDropOldest (a slow reader loses the oldest frames, counted in dropped()). If the socket is absent
// or dies, training continues; metrics.csv stays the durable record.

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

namespace ringmaster::trainer {

enum class OverflowPolicy { kDropOldest };

class Reporter
{
public:
    static constexpr std::size_t kQueueCapacity = 8192;
    static constexpr OverflowPolicy kOverflowPolicy = OverflowPolicy::kDropOldest;

    // Null when RINGMASTER_SOCKET is not set (run by hand or by torchrun).
    static std::unique_ptr<Reporter> fromEnvironment(int rank);

    Reporter(std::string socketPath, std::string token, int rank);
    ~Reporter(); // sends what is queued (up to a second), then closes
    Reporter(const Reporter&) = delete;
    Reporter& operator=(const Reporter&) = delete;

    // Adds "v" and queues the frame; never blocks on the socket.
    void send(nlohmann::json frame);
    // A heartbeat frame, at most one per protocol::kHeartbeatIntervalMs unless the phase changes.
    void heartbeat(std::int64_t step, const char* phase);
    std::uint64_t dropped() const { return m_dropped.load(); }

private:
    void run();
    bool connectSocket();
    bool writeAll(const std::string& bytes);

    std::string m_socketPath;
    std::string m_token;
    int m_rank;
    int m_fd = -1;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::string> m_queue;
    bool m_closing = false;
    std::atomic<std::uint64_t> m_dropped{0};
    std::chrono::steady_clock::time_point m_lastHeartbeat{};
    std::string m_lastPhase;
    std::thread m_thread;
};

} // namespace ringmaster::trainer
