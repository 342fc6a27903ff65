#pragma once
// Sum all-reduce through shared memory, for ranks on one host (CPU training). Gloo over TCP loopback
// copies every gradient through the kernel (2.5 ms for the cnn's 0.83 MB on the CI machine); here
// each rank copies its buffer into its slot once and reads its peers' slots directly.
// Every rank sums the slots in rank order, so the result is bit-identical on all ranks.
// Each rank publishes its buffer's length and the caller's tag (the gradient bucket) with its slot, and
// every reducer compares them: ranks reducing different buffers fail loudly instead of summing garbage.
// A rank waiting for a peer checks that the peer is alive and gives up after the collective timeout,
// with the same wording as a failed Gloo collective.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

namespace ringmaster::trainer {

class Communicator;

class ShmAllreduce
{
public:
    // One 64-byte cell per rank in the segment's header.
    static constexpr int kMaxRanks = 1024;

    // Throws UsageError when worldSize ranks cannot share one segment (more than kMaxRanks).
    static void requireSupportedWorldSize(int worldSize);

    // Collective: every rank of the communicator must call it. Returns null on every rank when any
    // rank could not set up the segment (then callers keep using the backend). Throws UsageError for
    // a world larger than kMaxRanks (on every rank, before any collective), and what the communicator
    // throws when a peer fails during set-up; the segment's name is removed on every path.
    static std::unique_ptr<ShmAllreduce> create(Communicator& communicator, std::int64_t capacityFloats,
                                                std::chrono::milliseconds timeout);
    ~ShmAllreduce();
    ShmAllreduce(const ShmAllreduce&) = delete;
    ShmAllreduce& operator=(const ShmAllreduce&) = delete;

    // Sums a contiguous float32 CPU tensor across ranks, in place. tag names the buffer (e.g. the
    // bucket index): every rank must pass the same tag and length in the same call, or all of them
    // throw naming both. Throws on a dead peer or timeout.
    void sumInPlace(torch::Tensor& tensor, std::uint64_t tag = 0);

private:
    struct Cell;
    ShmAllreduce(void* base, std::size_t bytes, int rank, int worldSize, std::int64_t capacity,
                 std::chrono::milliseconds timeout);
    Cell& cell(int rank) const;
    float* slot(int rank) const;
    void waitForAll(bool finishedField, std::uint64_t target) const;
    void requireSameBuffer(std::uint64_t tag, std::int64_t count) const;

    void* m_base;
    std::size_t m_bytes;
    int m_rank;
    int m_worldSize;
    std::int64_t m_capacity;
    std::chrono::milliseconds m_timeout;
    std::uint64_t m_sequence = 0;
};

} // namespace ringmaster::trainer
