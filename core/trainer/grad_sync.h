#pragma once
// Gradient all-reduce in flattened buckets, as DistributedDataParallel does it: parameters are put
// into buckets of --bucket-mb in reverse order (the order backward produces gradients), a hook on each
// parameter copies its gradient into its bucket, and buckets are launched strictly in bucket order as
// soon as they and every bucket before them are full, so communication overlaps the rest of backward
// and every rank launches the same collectives in the same order whatever order its hooks fire in.
// finish() waits, averages, and makes each .grad a view of its bucket (as DDP's gradient_as_bucket_view: the
// optimizer reads the bucket, and no gradient is copied back). compat::zeroGrad drops those views before the
// next backward.
//
// A few values every rank must sum each step (the trainer's loss and stop flag) ride at the end of the last
// bucket to launch (carry()): one collective a step instead of two, so ranks meet once a step, not twice.
//
// A parameter that gets no gradient in a step (a forward that skips a layer depending on the data or the
// rank) never fires its hook, so its bucket is never full. As in PyTorch DDP: by default finish() throws
// naming those parameters; with findUnusedParameters it marks them ready with zero gradients, so every
// rank launches every bucket in the same order, and the mean counts them as zeros on the ranks that did
// not use them. A parameter no rank used in the step keeps no gradient (the optimizer skips it).

#include <chrono>
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "trainer/communicator.h"
#include "trainer/shm_allreduce.h"

namespace ringmaster::trainer {

struct GradSyncOptions
{
    std::size_t bucketBytes = 25 * 1024 * 1024;
    bool sharedMemory = true; // same-host CPU ranks reduce through ShmAllreduce instead of the backend
    bool findUnusedParameters = false;
    std::chrono::milliseconds timeout{300000};
    std::int64_t carriedValues = 0; // room for carry() at the end of the last bucket
};

class GradientSynchronizer
{
public:
    // names: one per parameter, for error messages (empty: "parameter <index>").
    GradientSynchronizer(std::vector<torch::Tensor> parameters, std::vector<std::string> names,
                         Communicator& communicator, const GradSyncOptions& options);
    ~GradientSynchronizer();
    GradientSynchronizer(const GradientSynchronizer&) = delete;
    GradientSynchronizer& operator=(const GradientSynchronizer&) = delete;

    // Call before backward.
    void prepare();
    // Call after backward: every parameter's .grad then holds the all-rank mean. Throws UsageError
    // naming the parameters that got no gradient on this rank, unless findUnusedParameters.
    void finish();
    // Call between prepare() and backward (the last bucket launches during backward, or in finish()): values
    // (at most GradSyncOptions::carriedValues, any float type, on the parameters' device; stored in the bucket's
    // type) are summed across ranks with the last bucket; after finish(), carried() returns the sums (a view into
    // the bucket, valid until the next backward). Returns false when there is nothing to carry them (one rank,
    // no bucket, no room reserved): the caller all-reduces them itself.
    bool carry(const torch::Tensor& values);
    torch::Tensor carried() const;

    std::size_t bucketCount() const { return m_buckets.size(); }
    // Seconds this step spent in bucket launches since prepare(): a shared-memory launch waits there for the
    // other ranks inside backward, which step timing counts as waiting, not computing (step_timing.h).
    double launchSeconds() const { return m_launchSeconds; }
    // How gradients travel: "shared memory", the backend's name, or "none" (one rank).
    std::string transport() const;

private:
    struct Bucket
    {
        torch::Tensor flat;
        std::vector<std::size_t> members; // indices into m_parameters
        std::int64_t gradientCount = 0; // the gradients' part of flat; the last bucket has carried values after it
        int pending = 0;
        c10::intrusive_ptr<c10d::Work> work;
    };
    struct Slot
    {
        std::size_t bucket;
        std::int64_t offset;
        std::int64_t numel;
        unsigned hookHandle;
    };

    void onGradientReady(std::size_t parameterIndex, const torch::Tensor& gradient);
    void markReady(std::size_t parameterIndex);
    void launchReadyBuckets();
    void launch(std::size_t bucketIndex);
    std::vector<std::size_t> unusedParameters() const;
    [[noreturn]] void throwUnused(const std::vector<std::size_t>& unused) const;
    std::vector<bool> usedOnAnyRank(const std::vector<char>& usedHere);
    std::string nameOf(std::size_t parameterIndex) const;
    torch::Tensor view(std::size_t parameterIndex);

    std::vector<torch::Tensor> m_parameters;
    std::vector<std::string> m_names;
    Communicator& m_communicator;
    bool m_findUnused;
    std::vector<Bucket> m_buckets;
    std::vector<Slot> m_slots;
    std::vector<char> m_ready;      // per parameter: its gradient is in its bucket this step
    std::size_t m_nextBucket = 0;   // buckets below it are launched
    std::exception_ptr m_failure;   // a launch that threw inside backward, rethrown by finish()
    double m_launchSeconds = 0.0;   // since prepare()
    std::int64_t m_carriedRoom = 0; // floats reserved at the end of the last bucket
    std::int64_t m_carriedCount = 0; // how many carry() put there this step
    std::unique_ptr<ShmAllreduce> m_sharedMemory;
};

} // namespace ringmaster::trainer
