#pragma once
// Ends the process when a blocking call outlives its deadline, for calls that cannot be cancelled.
// The case it exists for: c10d's TCPStore client waits for its server's reply without any timeout, so
// when MASTER_PORT is held by some other program that accepts the connection but never answers, every
// rank but 0 would wait forever (rank 0 fails at once: the port is taken). A rank that cannot do its
// work must exit, not hang: the watchdog logs one error line and exits with the given code.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace ringmaster::trainer {

class Watchdog
{
public:
    Watchdog(std::chrono::milliseconds limit, std::string message, int exitCode);
    ~Watchdog(); // disarms: the guarded call returned (or threw) in time
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

private:
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_disarmed = false;
    std::thread m_thread;
};

} // namespace ringmaster::trainer
