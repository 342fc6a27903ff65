#pragma once
// Gradient all-reduce in flattened buckets, as DistributedDataParallel does it: parameters are put
// into buckets of --bucket-mb in reverse order (the order backward produces gradients), a hook on each
// parameter copies its gradient into its bucket, and a full bucket's all-reduce is launched at once,
// so communication overlaps the rest of backward. finish() waits, averages and writes .grad.

#include <cstddef>
#include <vector>

#include <torch/torch.h>

#include "communicator.h"
#include "shm_allreduce.h"

namespace ringmaster::trainer {

class GradientSynchronizer
{
public:
    // sharedMemory: same-host CPU ranks reduce through shared memory (ShmAllreduce) instead of the backend.
    GradientSynchronizer(std::vector<torch::Tensor> parameters, Communicator& communicator, std::size_t bucketBytes,
                         bool sharedMemory, std::chrono::milliseconds timeout);
    ~GradientSynchronizer();
    GradientSynchronizer(const GradientSynchronizer&) = delete;
    GradientSynchronizer& operator=(const GradientSynchronizer&) = delete;

    // Call before backward.
    void prepare();
    // Call after backward: every parameter's .grad then holds the all-rank mean.
    void finish();

    std::size_t bucketCount() const { return m_buckets.size(); }
    // How gradients travel: "shared memory", the backend's name, or "none" (one rank).
    std::string transport() const;

private:
    struct Bucket
    {
        torch::Tensor flat;
        std::vector<std::size_t> members; // indices into m_parameters
        int pending = 0;
        c10::intrusive_ptr<c10d::Work> work;
        bool launched = false;
    };
    struct Slot
    {
        std::size_t bucket;
        std::int64_t offset;
        std::int64_t numel;
        unsigned hookHandle;
    };

    void onGradientReady(std::size_t parameterIndex, const torch::Tensor& gradient);
    void launch(Bucket& bucket);
    torch::Tensor view(std::size_t parameterIndex);

    std::vector<torch::Tensor> m_parameters;
    Communicator& m_communicator;
    std::vector<Bucket> m_buckets;
    std::vector<Slot> m_slots;
    std::unique_ptr<ShmAllreduce> m_sharedMemory;
};

} // namespace ringmaster::trainer
