#pragma once
// Where the supervisor's TCP metrics endpoint listens for a Slurm run: on the one address of this host
// that the compute nodes can reach, not on every interface. Compute nodes reach the Slurm controller,
// and they usually share its network, so the address is the one this host uses to reach slurmctld
// (the kernel's route choice, asked with a UDP socket that sends nothing). An administrator or user who
// knows better sets RINGMASTER_LISTEN_ADDRESS (an address or a host name). Without either, this host's
// first non-loopback address; on a machine without one, loopback (a one-node cluster). This blocks
// (scontrol, name lookups): call it off the GUI thread.

#include <QHostAddress>
#include <QString>

#include "supervisor/slurm/slurm_client.h"

namespace ringmaster::supervisor {

inline constexpr char kListenAddressEnv[] = "RINGMASTER_LISTEN_ADDRESS";
inline constexpr quint16 kSlurmctldDefaultPort = 6817;

struct ReachableAddress
{
    QHostAddress address;
    QString how;      // for the run's log: why this address
    QString error;    // RINGMASTER_LISTEN_ADDRESS names nothing usable; address is then null
};

ReachableAddress addressComputeNodesReach(const SlurmClient& client);

// The local address the kernel would send from to reach `peer` (no packet is sent); null when no route.
QHostAddress sourceAddressTowards(const QHostAddress& peer, quint16 port);

} // namespace ringmaster::supervisor
