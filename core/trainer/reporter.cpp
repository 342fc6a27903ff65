#include "trainer/reporter.h"

#include "protocol/frame_mac.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "protocol/wire.h"
#include "trainer/log.h"

namespace ringmaster::trainer {
namespace {

constexpr std::size_t kMaxBatchBytes = 256 * 1024;
// How long one wait for a writable socket lasts before the exit deadline is looked at again.
constexpr int kPollSliceMs = 50;
// A full listen backlog makes a non-blocking connect fail with EAGAIN: retry this often.
constexpr auto kConnectRetry = std::chrono::milliseconds(50);

// The node this rank runs on, as Slurm names it (srun -w takes that name), else the host name.
std::string nodeName()
{
    if (const char* slurm = std::getenv("SLURMD_NODENAME"); slurm && *slurm) return slurm;
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) return {};
    return host;
}

} // namespace

const char* phaseName(Phase phase)
{
    switch (phase) {
    case Phase::Loading: return "loading";
    case Phase::Rendezvous: return "rendezvous";
    case Phase::Train: return "train";
    case Phase::Eval: return "eval";
    case Phase::Checkpoint: return "checkpoint";
    case Phase::Done: return "done";
    }
    return "unknown";
}

std::unique_ptr<Reporter> Reporter::fromEnvironment(int rank)
{
    const char* path = std::getenv(protocol::kSocketEnv);
    const char* endpoint = std::getenv(protocol::kEndpointEnv);
    if ((!path || !*path) && (!endpoint || !*endpoint)) return nullptr;
    const char* token = std::getenv(protocol::kTokenEnv);
    return std::make_unique<Reporter>(path ? path : "", token ? token : "", rank, endpoint ? endpoint : "");
}

Reporter::Reporter(std::string socketPath, std::string token, int rank, std::string endpoint)
    : m_socketPath(std::move(socketPath))
    , m_endpoint(std::move(endpoint))
    , m_token(std::move(token))
    , m_rank(rank)
{
    m_writer = std::thread([this] { writerLoop(); });
    m_heartbeats = std::thread([this] { heartbeatLoop(); });
}

Reporter::~Reporter()
{
    {
        std::lock_guard lock(m_mutex);
        m_closing = true;
        m_exitDeadline = std::chrono::steady_clock::now() + kExitDeadline;
    }
    m_heartbeatWake.notify_one();
    m_heartbeats.join();
    m_wake.notify_one();
    m_writer.join();
    if (m_fd >= 0) ::close(m_fd);
}

void Reporter::send(nlohmann::json frame)
{
    frame[protocol::kKeyVersion] = protocol::kProtocolVersion;
    std::string line = frame.dump() + "\n";
    if (line.size() > static_cast<std::size_t>(protocol::kMaxFrameBytes)) return; // never sent; cannot happen for our frames
    {
        std::lock_guard lock(m_mutex);
        if (m_queue.size() >= kQueueCapacity) {
            m_queue.pop_front(); // drop the oldest
            m_dropped.fetch_add(1);
        }
        m_queue.push_back(std::move(line));
    }
    m_wake.notify_one();
}

namespace {

std::int64_t steadyMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

void Reporter::setProgress(std::int64_t step, Phase phase)
{
    m_lastProgressMs.store(steadyMs());
    m_step.store(step);
    if (m_phase.exchange(phase) != phase) sendHeartbeat();
}

void Reporter::sendHeartbeat(bool withUsage)
{
    nlohmann::json frame{{protocol::kKeyType, protocol::kTypeHeartbeat}, {protocol::kKeyStep, m_step.load()},
                         {protocol::kKeyPhase, phaseName(m_phase.load())}};
    if (auto timing = m_timings.take(); !timing.is_null()) frame[protocol::kKeyTiming] = std::move(timing);
    if (withUsage) {
        if (auto usage = m_usage.take(); !usage.is_null()) frame[protocol::kKeyUsage] = std::move(usage);
    }
    send(std::move(frame));
}

void Reporter::heartbeatLoop()
{
    const auto interval = std::chrono::milliseconds(protocol::kHeartbeatIntervalMs);
    sendHeartbeat(true);
    auto next = std::chrono::steady_clock::now() + interval;
    std::unique_lock lock(m_mutex);
    bool stalled = false;
    while (!m_heartbeatWake.wait_until(lock, next, [this] { return m_closing; })) {
        lock.unlock();
        const std::int64_t limit = m_stallLimitMs.load();
        const std::int64_t quiet = steadyMs() - m_lastProgressMs.load();
        if (limit > 0 && m_lastProgressMs.load() > 0 && quiet > limit) {
            if (!stalled) {
                log::warn("no progress for {} s in phase '{}': heartbeats stop so that the supervisor can act",
                             quiet / 1000, phaseName(m_phase.load()));
            }
            stalled = true;
        } else {
            stalled = false;
            sendHeartbeat(true);
        }
        lock.lock();
        // A timer that fell behind (a stalled machine) restarts its beat instead of bursting.
        next = std::max(next + interval, std::chrono::steady_clock::now());
    }
}

bool Reporter::pastExitDeadline() const
{
    std::lock_guard lock(m_mutex);
    return m_closing && std::chrono::steady_clock::now() >= m_exitDeadline;
}

std::string Reporter::peerName() const
{
    return m_overTcp ? "tcp " + m_endpoint : m_socketPath;
}

bool Reporter::connectSocket()
{
    bool connected = !m_socketPath.empty() && connectUnix();
    if (!connected && !m_endpoint.empty()) {
        if (m_fd >= 0) ::close(m_fd);
        m_fd = -1;
        connected = connectTcp();
        m_overTcp = connected;
        if (connected) log::info("reporting over TCP to {} (the socket {} is not reachable from here)", m_endpoint,
                                    m_socketPath.empty() ? "(none)" : m_socketPath);
    }
    if (!connected) {
        log::warn("reporting {}{}{} unreachable: training continues, metrics.csv is the record",
                     m_socketPath.empty() ? "" : "socket " + m_socketPath, !m_socketPath.empty() && !m_endpoint.empty() ? " and " : "",
                     m_endpoint.empty() ? "" : "endpoint tcp " + m_endpoint);
        return false;
    }
    nlohmann::json hello = {{protocol::kKeyVersion, protocol::kProtocolVersion},
                            {protocol::kKeyType, protocol::kTypeHello},
                            {protocol::kKeyRank, m_rank},
                            {protocol::kKeyPid, static_cast<long>(::getpid())},
                            {protocol::kKeyHost, nodeName()}};
    if (m_overTcp) {
        // The token never crosses the network: the hello proves it against this connection's nonce.
        if (!readChallenge()) {
            log::warn("reporting endpoint tcp {} sent no challenge: training continues, metrics.csv is the record", m_endpoint);
            return false;
        }
        hello[protocol::kKeyMac] = protocol::helloMac(m_token, m_nonce, m_rank, static_cast<long>(::getpid()));
    } else {
        hello[protocol::kKeyToken] = m_token;
    }
    return writeAll(hello.dump() + "\n");
}

bool Reporter::readChallenge()
{
    std::string line;
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::milliseconds(protocol::kHelloTimeoutMs);
    char byte = 0;
    while (line.size() < static_cast<std::size_t>(protocol::kMaxFrameBytes)) {
        const ssize_t got = ::recv(m_fd, &byte, 1, 0);
        if (got == 1) {
            if (byte == '\n') break;
            line.push_back(byte);
            continue;
        }
        if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return false;
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(giveUp - std::chrono::steady_clock::now()).count();
        if (left <= 0 || pastExitDeadline()) return false;
        pollfd readable{m_fd, POLLIN, 0};
        ::poll(&readable, 1, static_cast<int>(std::min<long long>(left, kPollSliceMs)));
    }
    const auto challenge = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!challenge.is_object() || challenge.value(protocol::kKeyType, "") != protocol::kTypeChallenge) return false;
    m_nonce = challenge.value(protocol::kKeyNonce, "");
    m_sequence = 0;
    return !m_nonce.empty();
}

std::string Reporter::sealed(const std::string& line)
{
    if (!m_overTcp) return line;
    const std::string frame = line.substr(0, line.size() - 1); // without its newline
    return protocol::frameMac(m_token, m_nonce, ++m_sequence, frame) + " " + line;
}

bool Reporter::connectUnix()
{
    m_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    if (m_fd < 0 || m_socketPath.size() >= sizeof address.sun_path) return false;
    std::memcpy(address.sun_path, m_socketPath.c_str(), m_socketPath.size() + 1);
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::milliseconds(protocol::kHelloTimeoutMs);
    while (::connect(m_fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
        if (errno == EINTR) continue;
        if (errno != EAGAIN || std::chrono::steady_clock::now() >= giveUp || pastExitDeadline()) {
            log::info("reporting socket {} unreachable ({})", m_socketPath, std::strerror(errno));
            return false;
        }
        std::this_thread::sleep_for(kConnectRetry);
    }
    return true;
}

bool Reporter::connectTcp()
{
    // "HOST:PORT"; an IPv6 address comes bracketed ("[::1]:5000") or bare (the last colon splits).
    const auto colon = m_endpoint.rfind(':');
    if (colon == std::string::npos || colon == 0) {
        log::warn("{} '{}' is not HOST:PORT", protocol::kEndpointEnv, m_endpoint);
        return false;
    }
    std::string host = m_endpoint.substr(0, colon);
    const std::string port = m_endpoint.substr(colon + 1);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &found); rc != 0) {
        log::warn("reporting endpoint tcp {}: {}", m_endpoint, ::gai_strerror(rc));
        return false;
    }
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
    for (const addrinfo* a = found; a; a = a->ai_next) {
        m_fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (m_fd < 0) continue;
        const int one = 1;
        ::setsockopt(m_fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        int rc = ::connect(m_fd, a->ai_addr, a->ai_addrlen);
        if (rc != 0 && errno == EINPROGRESS) {
            pollfd writable{m_fd, POLLOUT, 0};
            int error = 0;
            socklen_t length = sizeof error;
            rc = ::poll(&writable, 1, protocol::kHelloTimeoutMs) == 1 &&
                         ::getsockopt(m_fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
                     ? 0
                     : -1;
            if (error != 0) errno = error;
        }
        if (rc == 0) return true;
        log::info("reporting endpoint tcp {} unreachable ({})", m_endpoint, std::strerror(errno));
        ::close(m_fd);
        m_fd = -1;
    }
    return false;
}

bool Reporter::writeAll(const std::string& bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t written = ::send(m_fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
        if (written >= 0) {
            done += static_cast<std::size_t>(written);
            continue;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
        // The reader is behind: wait for room, but never past the exit deadline.
        if (pastExitDeadline()) return false;
        pollfd writable{m_fd, POLLOUT, 0};
        if (::poll(&writable, 1, kPollSliceMs) < 0 && errno != EINTR) return false;
    }
    return true;
}

void Reporter::writerLoop()
{
    bool healthy = connectSocket();
    std::unique_lock lock(m_mutex);
    while (true) {
        m_wake.wait(lock, [this] { return m_closing || !m_queue.empty(); });
        if (!healthy) m_queue.clear();
        if (m_queue.empty()) {
            if (m_closing) return;
            continue;
        }
        std::string batch;
        while (!m_queue.empty() && batch.size() < kMaxBatchBytes) {
            batch += sealed(m_queue.front());
            m_queue.pop_front();
        }
        lock.unlock();
        if (!writeAll(batch)) {
            if (pastExitDeadline()) {
                log::warn("reporting socket {}: the reader took no frames for {} ms at exit; the last frames "
                             "were not delivered (metrics.csv has them)", peerName(), kExitDeadline.count());
                return;
            }
            log::warn("reporting socket {} closed: training continues, metrics.csv is the record", peerName());
            healthy = false;
        }
        lock.lock();
    }
}

} // namespace ringmaster::trainer
