#include "supervisor/slurm/reachable_address.h"

#include <QHostInfo>
#include <QNetworkInterface>

#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ringmaster::supervisor {
namespace {

QHostAddress resolve(const QString& host)
{
    const QHostAddress literal(host);
    if (!literal.isNull()) return literal;
    const QHostInfo info = QHostInfo::fromName(host);
    for (const QHostAddress& address : info.addresses()) {
        if (address.protocol() == QAbstractSocket::IPv4Protocol) return address;
    }
    return info.addresses().isEmpty() ? QHostAddress() : info.addresses().first();
}

} // namespace

QHostAddress sourceAddressTowards(const QHostAddress& peer, quint16 port)
{
    sockaddr_storage target{};
    socklen_t length = 0;
    bool ok = false;
    if (peer.protocol() == QAbstractSocket::IPv4Protocol) {
        auto* v4 = reinterpret_cast<sockaddr_in*>(&target);
        v4->sin_family = AF_INET;
        v4->sin_port = htons(port);
        v4->sin_addr.s_addr = htonl(peer.toIPv4Address(&ok));
        length = sizeof(sockaddr_in);
    } else if (peer.protocol() == QAbstractSocket::IPv6Protocol) {
        auto* v6 = reinterpret_cast<sockaddr_in6*>(&target);
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(port);
        const Q_IPV6ADDR bytes = peer.toIPv6Address();
        std::memcpy(v6->sin6_addr.s6_addr, bytes.c, sizeof bytes.c);
        length = sizeof(sockaddr_in6);
        ok = true;
    }
    if (!ok) return {};
    const int fd = ::socket(target.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return {};
    QHostAddress source;
    sockaddr_storage local{};
    socklen_t localLength = sizeof local;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&target), length) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLength) == 0) {
        source.setAddress(reinterpret_cast<sockaddr*>(&local));
    }
    ::close(fd);
    return source;
}

ReachableAddress addressComputeNodesReach(const SlurmClient& client)
{
    ReachableAddress chosen;
    const QString given = qEnvironmentVariable(kListenAddressEnv).trimmed();
    if (!given.isEmpty()) {
        chosen.address = resolve(given);
        if (chosen.address.isNull()) {
            chosen.error = QStringLiteral("%1=%2 is not an address or a host name this machine can resolve: "
                                          "set it to this host's address on the compute nodes' network")
                               .arg(QLatin1String(kListenAddressEnv), given);
        }
        chosen.how = QStringLiteral("%1=%2").arg(QLatin1String(kListenAddressEnv), given);
        return chosen;
    }
    for (const QString& controller : client.controllerHosts()) {
        const QHostAddress address = resolve(controller);
        if (address.isNull()) continue;
        chosen.address = sourceAddressTowards(address, kSlurmctldDefaultPort);
        if (chosen.address.isNull()) continue;
        chosen.how = QStringLiteral("this host's address towards slurmctld on %1").arg(controller);
        return chosen;
    }
    for (const QHostAddress& address : QNetworkInterface::allAddresses()) {
        if (address.protocol() == QAbstractSocket::IPv4Protocol && !address.isLoopback()) {
            chosen.address = address;
            chosen.how = QStringLiteral("this host's first network address (slurmctld's host is unknown)");
            return chosen;
        }
    }
    chosen.address = QHostAddress(QHostAddress::LocalHost);
    chosen.how = QStringLiteral("loopback: this host has no other address");
    return chosen;
}

} // namespace ringmaster::supervisor
