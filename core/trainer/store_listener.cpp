#include "trainer/store_listener.h"

#include <torch/version.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <netdb.h>
#include <netinet/in.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "trainer/errors.h"
#include "trainer/log.h"

namespace ringmaster::trainer {
namespace {

bool isLoopback(const sockaddr_storage& address)
{
    if (address.ss_family == AF_INET) return (ntohl(reinterpret_cast<const sockaddr_in*>(&address)->sin_addr.s_addr) >> 24) == 127;
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(&address)->sin6_addr);
}

// The address HOST resolves to for a TCP connection: the first, as TCPStore's clients resolve it. For a job on
// several nodes the first that is not loopback: Debian and Ubuntu map a host's own name to 127.0.1.1 in /etc/hosts,
// which the other nodes cannot reach. *wildcard when a multi-node job's MASTER_ADDR names only loopback here.
sockaddr_storage resolve(const std::string& host, bool spansNodes, socklen_t* length, bool* wildcard)
{
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0 || !found) {
        throw std::runtime_error("MASTER_ADDR " + host + " does not resolve: " + ::gai_strerror(rc));
    }
    const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> addresses(found, &::freeaddrinfo);
    *wildcard = false;
    for (const addrinfo* a = found; a; a = a->ai_next) {
        sockaddr_storage address{};
        std::memcpy(&address, a->ai_addr, a->ai_addrlen);
        if (!spansNodes || !isLoopback(address)) {
            *length = a->ai_addrlen;
            return address;
        }
    }
    log::warn("MASTER_ADDR {} names only a loopback address on this node, which the other nodes cannot reach: the "
              "rendezvous store listens on every interface (give MASTER_ADDR this node's network address to avoid that)", host);
    *wildcard = true;
    sockaddr_storage any{};
    reinterpret_cast<sockaddr_in6*>(&any)->sin6_family = AF_INET6;
    *length = sizeof(sockaddr_in6);
    return any;
}

void setPort(sockaddr_storage* address, std::uint16_t port)
{
    if (address->ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(port);
    else reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(port);
}

// Set while a StoreBindScope lives (1.13's path; read by the bind() below).
std::atomic<const sockaddr_storage*> g_storeAddress{nullptr};
sockaddr_storage g_storeAddressValue{};

} // namespace

int listenForStore(const std::string& host, std::uint16_t port, bool spansNodes)
{
    socklen_t length = 0;
    bool wildcard = false;
    sockaddr_storage address = resolve(host, spansNodes, &length, &wildcard);
    setPort(&address, port);
    const int fd = ::socket(address.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) throw std::runtime_error(std::string("cannot open the rendezvous socket: ") + std::strerror(errno));
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); // as TCPStore's own server: TIME_WAIT is no obstacle
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0 || ::listen(fd, SOMAXCONN) != 0) {
        const int error = errno;
        ::close(fd);
        const std::string where = host + ":" + std::to_string(port);
        if (error == EADDRINUSE) throw AddressInUseError("address already in use (" + where + ")");
        throw std::runtime_error("cannot listen on " + where + " for the rendezvous: " + std::strerror(error));
    }
    return fd;
}

StoreBindScope::StoreBindScope(const std::string& host, bool spansNodes)
{
    socklen_t length = 0;
    bool wildcard = false;
    g_storeAddressValue = resolve(host, spansNodes, &length, &wildcard);
    if (!wildcard) g_storeAddress.store(&g_storeAddressValue);
}

StoreBindScope::~StoreBindScope()
{
    g_storeAddress.store(nullptr);
}

} // namespace ringmaster::trainer

#if TORCH_VERSION_MAJOR < 2
namespace {

bool isWildcard(const sockaddr* address)
{
    if (address->sa_family == AF_INET) return reinterpret_cast<const sockaddr_in*>(address)->sin_addr.s_addr == htonl(INADDR_ANY);
    if (address->sa_family == AF_INET6) return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
    return false;
}

int realBind(int fd, const sockaddr* address, socklen_t length)
{
    return static_cast<int>(::syscall(SYS_bind, fd, address, length));
}

} // namespace

// LibTorch 1.13's TCPStore server binds the wildcard address; within a StoreBindScope that bind goes to
// MASTER_ADDR's address, same port (store_listener.h). Exported from the executable, so libtorch_cpu.so's call
// resolves here first.
extern "C" __attribute__((visibility("default"))) int bind(int fd, const sockaddr* address, socklen_t length)
{
    const sockaddr_storage* target = ringmaster::trainer::g_storeAddress.load();
    if (!target || !address || !isWildcard(address)) return realBind(fd, address, length);
    const std::uint16_t port = address->sa_family == AF_INET ? reinterpret_cast<const sockaddr_in*>(address)->sin_port
                                                             : reinterpret_cast<const sockaddr_in6*>(address)->sin6_port;
    if (address->sa_family == target->ss_family) {
        sockaddr_storage rewritten = *target;
        if (rewritten.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&rewritten)->sin_port = port;
        else reinterpret_cast<sockaddr_in6*>(&rewritten)->sin6_port = port;
        return realBind(fd, reinterpret_cast<const sockaddr*>(&rewritten),
                        rewritten.ss_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6));
    }
    if (address->sa_family == AF_INET6 && target->ss_family == AF_INET) {
        // An IPv6 socket (dual-stack) serves an IPv4 MASTER_ADDR at its mapped address, ::ffff:a.b.c.d.
        sockaddr_in6 mapped{};
        mapped.sin6_family = AF_INET6;
        mapped.sin6_port = port;
        mapped.sin6_addr.s6_addr[10] = 0xff;
        mapped.sin6_addr.s6_addr[11] = 0xff;
        std::memcpy(&mapped.sin6_addr.s6_addr[12], &reinterpret_cast<const sockaddr_in*>(target)->sin_addr, 4);
        return realBind(fd, reinterpret_cast<const sockaddr*>(&mapped), sizeof mapped);
    }
    errno = EADDRNOTAVAIL; // an IPv4 socket cannot serve an IPv6 MASTER_ADDR: never the wildcard instead
    return -1;
}
#endif
