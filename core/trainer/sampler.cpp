#include "trainer/sampler.h"

#include <ATen/CPUGeneratorImpl.h>

namespace ringmaster::trainer {

DistributedSampler::DistributedSampler(std::int64_t datasetSize, int worldSize, int rank, bool shuffle,
                                       std::uint64_t seed, bool dropLast)
    : m_datasetSize(datasetSize)
    , m_worldSize(worldSize)
    , m_rank(rank)
    , m_shuffle(shuffle)
    , m_seed(seed)
    , m_dropLast(dropLast)
{
    TORCH_CHECK(datasetSize > 0 && worldSize > 0 && rank >= 0 && rank < worldSize, "invalid sampler arguments");
    if (dropLast && datasetSize % worldSize != 0) {
        m_numSamples = (datasetSize - worldSize + worldSize - 1) / worldSize; // ceil((N - W) / W)
    } else {
        m_numSamples = (datasetSize + worldSize - 1) / worldSize;             // ceil(N / W)
    }
    m_totalSize = m_numSamples * worldSize;
}

torch::Tensor DistributedSampler::indices() const
{
    torch::Tensor order;
    if (m_shuffle) {
        auto generator = at::make_generator<at::CPUGeneratorImpl>(m_seed + static_cast<std::uint64_t>(m_epoch));
        order = torch::randperm(m_datasetSize, generator, torch::kLong);
    } else {
        order = torch::arange(m_datasetSize, torch::kLong);
    }
    if (m_totalSize > m_datasetSize) {
        // Python appends indices[:padding] (repeated as often as needed): tiling then cutting is the same.
        const auto repeats = (m_totalSize + m_datasetSize - 1) / m_datasetSize;
        order = order.repeat({repeats}).narrow(0, 0, m_totalSize);
    } else {
        order = order.narrow(0, 0, m_totalSize);
    }
    return order.slice(0, m_rank, m_totalSize, m_worldSize).contiguous();
}

torch::Tensor evaluationShard(std::int64_t datasetSize, int worldSize, int rank)
{
    return torch::arange(rank, datasetSize, worldSize, torch::kLong);
}

} // namespace ringmaster::trainer
