#pragma once
// Rendezvous (c10d::TCPStore served by rank 0, wrapped in a PrefixStore) and the collective backend:
// Gloo on CPU, NCCL on CUDA (compiled only where the found LibTorch has CUDA). World size 1 makes no
// store and no group: every collective is then a no-op.

#include <chrono>
#include <memory>
#include <string>

#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include "trainer/compat.h"
#include "trainer/dist_env.h"

namespace ringmaster::trainer {

struct CommunicatorOptions
{
    std::string backend;  // gloo | nccl
    std::chrono::milliseconds rendezvousTimeout{300000};
    std::chrono::milliseconds collectiveTimeout{300000};
    bool forceGroup = false; // a process group even for a world of one
    torch::Device device{torch::kCPU}; // the rank's device: NCCL's group is bound to it
};

class Communicator
{
public:
    // Throws UsageError (bad port, NCCL without CUDA) or std::runtime_error (rendezvous timeout).
    Communicator(const DistEnv& env, const CommunicatorOptions& options);
    ~Communicator();
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;

    int rank() const { return m_rank; }
    int worldSize() const { return m_worldSize; }
    bool distributed() const { return m_worldSize > 1 || m_forceGroup; }
    // Every rank on this host (LOCAL_WORLD_SIZE == WORLD_SIZE): shared memory can carry collectives.
    bool sameHost() const { return m_sameHost; }
    // Rank 0's value, delivered to every rank through the store.
    std::string shareString(const std::string& key, const std::string& value);
    const std::string& backendName() const { return m_backend; }

    // Sum over ranks, in place; the returned work must be waited on (null when not distributed).
    c10::intrusive_ptr<c10d::Work> allreduceSumAsync(torch::Tensor& tensor);
    void allreduceSum(torch::Tensor& tensor);
    // Copies rank 0's parameters and buffers into every rank's module.
    void broadcastFromRankZero(torch::nn::Module& module);
    // Copies rank 0's buffers only (batch-norm statistics), as DDP's broadcast_buffers before a forward.
    void broadcastBuffersFromRankZero(torch::nn::Module& module);
    void barrier();
    // Makes NCCL's communicator now (nothing for Gloo, which connected in the constructor).
    void connect();
    // Ends the group: `clean` (every rank finished) shuts NCCL down after its pending work, otherwise its
    // communicators are aborted, so a dead peer cannot hold this rank at exit. Idempotent; the destructor
    // aborts a group nobody closed.
    void close(bool clean);

private:
    void broadcastInPlace(const std::vector<torch::Tensor>& tensors);
    void broadcastChunk(const std::vector<torch::Tensor>& chunk); // one type, flattened into one broadcast
    static constexpr std::size_t kBroadcastChunkBytes = 64u << 20; // flat copy held at once (start-up peak)

    int m_rank;
    int m_worldSize;
    bool m_forceGroup;
    bool m_sameHost;
    std::string m_backend;
    c10::intrusive_ptr<c10d::Store> m_store;
    c10::intrusive_ptr<compat::CollectiveBackend> m_group;
    torch::Device m_device{torch::kCPU};
    bool m_closed = false;
};

// Waits and turns a backend failure (peer died, timeout) into one clear error.
void waitWork(const c10::intrusive_ptr<c10d::Work>& work, const char* what);

} // namespace ringmaster::trainer
