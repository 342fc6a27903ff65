#include "trainer/watchdog.h"

#include <cstdio>
#include <cstdlib>

#include "trainer/log.h"

namespace ringmaster::trainer {

Watchdog::Watchdog(std::chrono::milliseconds limit, std::string message, int exitCode)
{
    m_thread = std::thread([this, limit, message = std::move(message), exitCode] {
        std::unique_lock lock(m_mutex);
        if (m_wake.wait_for(lock, limit, [this] { return m_disarmed; })) return;
        log::error("{}", message);
        log::flush();
        std::fflush(nullptr);
        std::_Exit(exitCode); // the guarded thread is stuck in a call nobody can interrupt
    });
}

Watchdog::~Watchdog()
{
    {
        std::lock_guard lock(m_mutex);
        m_disarmed = true;
    }
    m_wake.notify_one();
    m_thread.join();
}

} // namespace ringmaster::trainer
