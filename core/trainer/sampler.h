#pragma once
// torch.utils.data.DistributedSampler, to the index: a permutation from a CPU generator seeded with
// seed + epoch (the same generator and randperm Python uses), padded by repeating its head up to a
// multiple of the world size (or truncated with drop_last), and rank r takes r, r+W, r+2W, ...
// LibTorch's own DistributedRandomSampler gives contiguous slices and ignores the seed, so it
// cannot reproduce a Python run's shards.

#include <cstdint>

#include <torch/torch.h>

namespace ringmaster::trainer {

class DistributedSampler
{
public:
    DistributedSampler(std::int64_t datasetSize, int worldSize, int rank, bool shuffle, std::uint64_t seed,
                       bool dropLast);

    void setEpoch(std::int64_t epoch) { m_epoch = epoch; }
    std::int64_t epoch() const { return m_epoch; }
    // Samples this rank sees per epoch (equal on every rank).
    std::int64_t numSamples() const { return m_numSamples; }
    // This rank's indices for the current epoch, as an int64 tensor.
    torch::Tensor indices() const;

private:
    std::int64_t m_datasetSize;
    int m_worldSize;
    int m_rank;
    bool m_shuffle;
    std::uint64_t m_seed;
    bool m_dropLast;
    std::int64_t m_numSamples;
    std::int64_t m_totalSize;
    std::int64_t m_epoch = 0;
};

// Validation shard: no shuffle and no padding, so summing over ranks covers each sample exactly once.
torch::Tensor evaluationShard(std::int64_t datasetSize, int worldSize, int rank);

} // namespace ringmaster::trainer
