#include "reporter.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "../protocol/wire.h"

namespace ringmaster::trainer {

std::unique_ptr<Reporter> Reporter::fromEnvironment(int rank)
{
    const char* path = std::getenv(protocol::kSocketEnv);
    if (!path || !*path) return nullptr;
    const char* token = std::getenv(protocol::kTokenEnv);
    return std::make_unique<Reporter>(path, token ? token : "", rank);
}

Reporter::Reporter(std::string socketPath, std::string token, int rank)
    : m_socketPath(std::move(socketPath))
    , m_token(std::move(token))
    , m_rank(rank)
{
    m_thread = std::thread([this] { run(); });
}

Reporter::~Reporter()
{
    {
        std::lock_guard lock(m_mutex);
        m_closing = true;
    }
    m_wake.notify_one();
    m_thread.join();
    if (m_fd >= 0) ::close(m_fd);
}

void Reporter::send(nlohmann::json frame)
{
    frame["v"] = protocol::kProtocolVersion;
    std::string line = frame.dump() + "\n";
    if (line.size() > static_cast<std::size_t>(protocol::kMaxFrameBytes)) return; // never sent; cannot happen for our frames
    {
        std::lock_guard lock(m_mutex);
        if (m_queue.size() >= kQueueCapacity) {
            m_queue.pop_front(); // kDropOldest
            m_dropped.fetch_add(1);
        }
        m_queue.push_back(std::move(line));
    }
    m_wake.notify_one();
}

void Reporter::heartbeat(std::int64_t step, const char* phase)
{
    const auto now = std::chrono::steady_clock::now();
    if (m_lastPhase == phase && now - m_lastHeartbeat < std::chrono::milliseconds(protocol::kHeartbeatIntervalMs)) {
        return;
    }
    m_lastHeartbeat = now;
    m_lastPhase = phase;
    send({{"type", "heartbeat"}, {"step", step}, {"phase", phase}});
}

bool Reporter::connectSocket()
{
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (m_fd < 0 || m_socketPath.size() >= sizeof address.sun_path) return false;
    std::memcpy(address.sun_path, m_socketPath.c_str(), m_socketPath.size() + 1);
    if (::connect(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        spdlog::warn("reporting socket {} unreachable ({}): training continues, metrics.csv is the record",
                     m_socketPath, std::strerror(errno));
        return false;
    }
    nlohmann::json hello = {{"v", protocol::kProtocolVersion}, {"type", "hello"}, {"rank", m_rank},
                            {"pid", static_cast<long>(::getpid())}, {"token", m_token}};
    return writeAll(hello.dump() + "\n");
}

bool Reporter::writeAll(const std::string& bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t written = ::send(m_fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (written < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        done += static_cast<std::size_t>(written);
    }
    return true;
}

void Reporter::run()
{
    bool healthy = connectSocket();
    const auto closeDeadline = std::chrono::seconds(1);
    std::chrono::steady_clock::time_point closingSince{};
    std::unique_lock lock(m_mutex);
    while (true) {
        m_wake.wait(lock, [this] { return m_closing || !m_queue.empty(); });
        if (m_closing && closingSince == std::chrono::steady_clock::time_point{}) {
            closingSince = std::chrono::steady_clock::now();
        }
        if (m_queue.empty() || !healthy) {
            if (!healthy) m_queue.clear();
            if (m_closing) return;
            continue;
        }
        std::string batch;
        while (!m_queue.empty() && batch.size() < 256 * 1024) {
            batch += m_queue.front();
            m_queue.pop_front();
        }
        lock.unlock();
        if (!writeAll(batch)) {
            spdlog::warn("reporting socket {} closed: training continues, metrics.csv is the record", m_socketPath);
            healthy = false;
        }
        lock.lock();
        if (m_closing && std::chrono::steady_clock::now() - closingSince > closeDeadline) return;
    }
}

} // namespace ringmaster::trainer
