#pragma once
// The rendezvous store (c10d::TCPStore, served by rank 0) listens on MASTER_ADDR's address only: loopback for
// a run on one machine, the first node's address under Slurm. LibTorch's own server binds every interface for
// the whole run, unauthenticated, so anyone who can reach the machine could read or write the store's keys
// (the ranks' addresses, NCCL's unique id) or disturb the rendezvous.
//   - LibTorch 2.x: rank 0 binds and listens itself (listenForStore) and hands the socket to TCPStore
//     (TCPStoreOptions::masterListenFd, the way torchelastic hands its agent's socket over), served by the
//     classic (not libuv) server, which takes such a socket in every release.
//   - LibTorch 1.13 has no such option: while a StoreBindScope lives, a bind() of a wildcard address in this
//     process (the store server's, made in TCPStore's constructor) binds MASTER_ADDR's address instead. The
//     trainer executable defines bind() for that, so the dynamic linker routes libtorch's call through it;
//     every other bind (gloo's, the reporter's) passes through unchanged.
// Either way a port another program holds is EADDRINUSE, reported as before (exit 3). A job on several nodes
// takes MASTER_ADDR's first address that is not loopback (a host's own name may map to 127.0.1.1 locally), and
// listens on every interface, with a warning, only when there is none.

#include <cstdint>
#include <string>

namespace ringmaster::trainer {

// A TCP socket bound to HOST (resolved as the clients resolve it: the first address) and PORT, listening.
// Throws AddressInUseError when the port is taken there, std::runtime_error for other failures.
int listenForStore(const std::string& host, std::uint16_t port, bool spansNodes);

// While alive, wildcard binds in this process bind HOST's address instead (see above). One at a time.
class StoreBindScope
{
public:
    StoreBindScope(const std::string& host, bool spansNodes);
    ~StoreBindScope();
    StoreBindScope(const StoreBindScope&) = delete;
    StoreBindScope& operator=(const StoreBindScope&) = delete;
};

} // namespace ringmaster::trainer
