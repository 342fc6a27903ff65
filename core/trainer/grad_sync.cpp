#include "trainer/grad_sync.h"

#include <algorithm>

#include "trainer/errors.h"

namespace ringmaster::trainer {
namespace {

constexpr std::size_t kMostNamesInAnError = 20;

} // namespace

GradientSynchronizer::GradientSynchronizer(std::vector<torch::Tensor> parameters, std::vector<std::string> names,
                                           Communicator& communicator, const GradSyncOptions& options)
    : m_parameters(std::move(parameters))
    , m_names(std::move(names))
    , m_communicator(communicator)
    , m_findUnused(options.findUnusedParameters)
{
    if (!m_communicator.distributed()) return;
    m_slots.resize(m_parameters.size());
    m_ready.assign(m_parameters.size(), 0);
    std::vector<std::vector<std::size_t>> groups;
    std::size_t bytes = 0;
    for (std::size_t i = m_parameters.size(); i-- > 0;) {
        const auto& param = m_parameters[i];
        const std::size_t paramBytes = static_cast<std::size_t>(param.numel()) * param.element_size();
        // A new bucket when there is none yet, or when this parameter would overflow a non-empty one
        // (a parameter larger than the cap gets a bucket of its own).
        if (groups.empty() || (bytes + paramBytes > options.bucketBytes && !groups.back().empty())) {
            groups.emplace_back();
            bytes = 0;
        }
        groups.back().push_back(i);
        bytes += paramBytes;
    }
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const auto& group = groups[g];
        Bucket bucket;
        std::int64_t offset = 0;
        for (const std::size_t index : group) {
            m_slots[index] = Slot{m_buckets.size(), offset, m_parameters[index].numel(), 0};
            offset += m_parameters[index].numel();
        }
        bucket.gradientCount = offset;
        if (g + 1 == groups.size()) {
            m_carriedRoom = std::max<std::int64_t>(options.carriedValues, 0);
            offset += m_carriedRoom;
        }
        bucket.flat = torch::zeros({offset}, m_parameters[group.front()].options().requires_grad(false));
        bucket.members = group;
        m_buckets.push_back(std::move(bucket));
    }
    std::int64_t largest = 0;
    for (const auto& bucket : m_buckets) largest = std::max(largest, bucket.flat.numel());
    const bool cpu = !m_parameters.empty() && m_parameters.front().device().is_cpu();
    if (options.sharedMemory && cpu && m_communicator.worldSize() > 1 && m_communicator.sameHost()) {
        m_sharedMemory = ShmAllreduce::create(m_communicator, largest, options.timeout);
    }
    for (std::size_t i = 0; i < m_parameters.size(); ++i) {
        m_slots[i].hookHandle = m_parameters[i].register_hook(
            [this, i](const torch::Tensor& gradient) { onGradientReady(i, gradient); });
    }
}

GradientSynchronizer::~GradientSynchronizer()
{
    if (!m_communicator.distributed()) return;
    for (std::size_t i = 0; i < m_parameters.size(); ++i) {
        m_parameters[i].remove_hook(m_slots[i].hookHandle);
    }
}

torch::Tensor GradientSynchronizer::view(std::size_t parameterIndex)
{
    const auto& slot = m_slots[parameterIndex];
    return m_buckets[slot.bucket].flat.narrow(0, slot.offset, slot.numel).view(m_parameters[parameterIndex].sizes());
}

std::string GradientSynchronizer::nameOf(std::size_t parameterIndex) const
{
    if (parameterIndex < m_names.size() && !m_names[parameterIndex].empty()) return m_names[parameterIndex];
    return "parameter " + std::to_string(parameterIndex);
}

void GradientSynchronizer::prepare()
{
    for (auto& bucket : m_buckets) {
        bucket.pending = static_cast<int>(bucket.members.size());
        bucket.work.reset();
    }
    std::fill(m_ready.begin(), m_ready.end(), 0);
    m_nextBucket = 0;
    m_failure = nullptr;
    m_launchSeconds = 0.0;
    m_carriedCount = 0;
}

bool GradientSynchronizer::carry(const torch::Tensor& values)
{
    if (m_buckets.empty() || values.numel() > m_carriedRoom) return false;
    torch::NoGradGuard noGrad;
    auto& last = m_buckets.back();
    m_carriedCount = values.numel();
    last.flat.narrow(0, last.gradientCount, m_carriedCount).copy_(values.reshape({-1}));
    return true;
}

torch::Tensor GradientSynchronizer::carried() const
{
    const auto& last = m_buckets.back();
    return last.flat.narrow(0, last.gradientCount, m_carriedCount);
}

void GradientSynchronizer::onGradientReady(std::size_t parameterIndex, const torch::Tensor& gradient)
{
    // Runs inside backward: an exception here would surface as an autograd error, so a failed launch
    // is kept for finish(), and later buckets are not launched (the step is lost anyway).
    // It still marks the parameter ready, so finish() names only parameters that really got no gradient.
    try {
        if (m_ready[parameterIndex]) {
            throw std::runtime_error("parameter " + nameOf(parameterIndex) + " got a second gradient before the "
                                     "previous one was all-reduced (backward ran twice in one step)");
        }
        markReady(parameterIndex);
        if (m_failure) return;
        torch::NoGradGuard noGrad;
        view(parameterIndex).copy_(gradient);
        launchReadyBuckets();
    } catch (...) {
        if (!m_failure) m_failure = std::current_exception();
    }
}

void GradientSynchronizer::markReady(std::size_t parameterIndex)
{
    m_ready[parameterIndex] = 1;
    --m_buckets[m_slots[parameterIndex].bucket].pending;
}

void GradientSynchronizer::launchReadyBuckets()
{
    // Strictly in bucket order: a full bucket waits for every bucket before it, so the sequence of
    // collectives is the same on every rank whatever order the hooks fired in.
    while (m_nextBucket < m_buckets.size() && m_buckets[m_nextBucket].pending == 0) {
        const auto started = std::chrono::steady_clock::now();
        launch(m_nextBucket++);
        m_launchSeconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
}

void GradientSynchronizer::launch(std::size_t bucketIndex)
{
    auto& bucket = m_buckets[bucketIndex];
    if (m_sharedMemory) {
        // Synchronous: same-host peers reach the same bucket at about the same time, and there is no
        // transport to overlap with.
        m_sharedMemory->sumInPlace(bucket.flat, bucketIndex);
        bucket.work.reset();
        return;
    }
    bucket.work = m_communicator.allreduceSumAsync(bucket.flat);
}

std::string GradientSynchronizer::transport() const
{
    if (!m_communicator.distributed()) return "none";
    return m_sharedMemory ? "shared memory" : m_communicator.backendName();
}

std::vector<std::size_t> GradientSynchronizer::unusedParameters() const
{
    std::vector<std::size_t> unused;
    for (std::size_t i = 0; i < m_parameters.size(); ++i) {
        if (!m_ready[i]) unused.push_back(i);
    }
    return unused;
}

std::vector<bool> GradientSynchronizer::usedOnAnyRank(const std::vector<char>& usedHere)
{
    // Launched after every bucket, so it is the same collective at the same place on every rank.
    if (m_parameters.empty()) return {};
    auto used = torch::empty({static_cast<std::int64_t>(m_parameters.size())}, torch::kFloat32);
    auto* flags = used.data_ptr<float>();
    for (std::size_t i = 0; i < m_parameters.size(); ++i) flags[i] = usedHere[i] ? 1.0f : 0.0f;
    auto onDevice = used.to(m_parameters.front().device());
    m_communicator.allreduceSum(onDevice);
    used = onDevice.cpu();
    flags = used.data_ptr<float>();
    std::vector<bool> result(m_parameters.size());
    for (std::size_t i = 0; i < m_parameters.size(); ++i) result[i] = flags[i] > 0.0f;
    return result;
}

void GradientSynchronizer::throwUnused(const std::vector<std::size_t>& unused) const
{
    std::string names;
    for (std::size_t k = 0; k < unused.size() && k < kMostNamesInAnError; ++k) {
        names += (k ? ", " : "") + nameOf(unused[k]);
    }
    if (unused.size() > kMostNamesInAnError) names += ", ...";
    throw UsageError("rank " + std::to_string(m_communicator.rank()) + ": " + std::to_string(unused.size()) +
                     " parameter(s) got no gradient in this step: " + names +
                     " (the forward did not use them). Every rank must all-reduce every parameter; for a model "
                     "that skips layers depending on the data or the rank, pass --find-unused-parameters true");
}

void GradientSynchronizer::finish()
{
    if (!m_communicator.distributed()) {
        // One rank has nothing to all-reduce, but the same job on more ranks would fail: say so now,
        // as PyTorch DDP does with one process (gradients are set to none before each step).
        if (m_findUnused) return;
        std::vector<std::size_t> unused;
        for (std::size_t i = 0; i < m_parameters.size(); ++i) {
            if (!m_parameters[i].grad().defined()) unused.push_back(i);
        }
        if (!unused.empty()) throwUnused(unused);
        return;
    }
    torch::NoGradGuard noGrad;
    const auto unused = unusedParameters();
    if (!unused.empty() && !m_findUnused) throwUnused(unused);
    if (m_failure) std::rethrow_exception(m_failure);
    // Unused here: zero gradients, marked ready; the buckets then launch in bucket order as on every rank.
    const std::vector<char> usedHere = m_ready;
    for (const std::size_t index : unused) {
        view(index).zero_();
        markReady(index);
    }
    launchReadyBuckets();
    const std::vector<bool> used = m_findUnused ? usedOnAnyRank(usedHere) : std::vector<bool>(m_parameters.size(), true);
    const double worldSize = m_communicator.worldSize();
    for (auto& bucket : m_buckets) {
        waitWork(bucket.work, "gradient all-reduce");
        bucket.flat.narrow(0, 0, bucket.gradientCount).div_(worldSize); // carried values stay sums
        for (const std::size_t index : bucket.members) {
            auto& grad = m_parameters[index].mutable_grad();
            // No rank used it: no gradient, as PyTorch DDP leaves it. Otherwise the gradient is the bucket's
            // slice itself (DDP's gradient_as_bucket_view): no copy back. The next step drops it before its
            // backward (compat::zeroGrad), so the hooks' copies into the bucket never write a live gradient.
            if (!used[index]) grad.reset();
            else grad = view(index);
        }
    }
}

} // namespace ringmaster::trainer
