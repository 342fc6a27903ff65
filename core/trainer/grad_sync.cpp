#include "grad_sync.h"

namespace ringmaster::trainer {

GradientSynchronizer::GradientSynchronizer(std::vector<torch::Tensor> parameters, Communicator& communicator,
                                           std::size_t bucketBytes, bool sharedMemory, std::chrono::milliseconds timeout)
    : m_parameters(std::move(parameters))
    , m_communicator(communicator)
{
    if (!m_communicator.distributed()) return;
    m_slots.resize(m_parameters.size());
    std::vector<std::vector<std::size_t>> groups;
    std::size_t bytes = 0;
    for (std::size_t i = m_parameters.size(); i-- > 0;) {
        const auto& param = m_parameters[i];
        const std::size_t paramBytes = static_cast<std::size_t>(param.numel()) * param.element_size();
        // A new bucket when there is none yet, or when this parameter would overflow a non-empty one
        // (a parameter larger than the cap gets a bucket of its own).
        if (groups.empty() || (bytes + paramBytes > bucketBytes && !groups.back().empty())) {
            groups.emplace_back();
            bytes = 0;
        }
        groups.back().push_back(i);
        bytes += paramBytes;
    }
    for (const auto& group : groups) {
        Bucket bucket;
        std::int64_t offset = 0;
        for (const std::size_t index : group) {
            m_slots[index] = Slot{m_buckets.size(), offset, m_parameters[index].numel(), 0};
            offset += m_parameters[index].numel();
        }
        bucket.flat = torch::zeros({offset}, m_parameters[group.front()].options().requires_grad(false));
        bucket.members = group;
        m_buckets.push_back(std::move(bucket));
    }
    std::int64_t largest = 0;
    for (const auto& bucket : m_buckets) largest = std::max(largest, bucket.flat.numel());
    const bool cpu = !m_parameters.empty() && m_parameters.front().device().is_cpu();
    if (sharedMemory && cpu && m_communicator.worldSize() > 1 && m_communicator.sameHost()) {
        m_sharedMemory = ShmAllreduce::create(m_communicator, largest, timeout);
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

void GradientSynchronizer::prepare()
{
    for (auto& bucket : m_buckets) {
        bucket.pending = static_cast<int>(bucket.members.size());
        bucket.launched = false;
        bucket.work.reset();
    }
}

void GradientSynchronizer::onGradientReady(std::size_t parameterIndex, const torch::Tensor& gradient)
{
    torch::NoGradGuard noGrad;
    view(parameterIndex).copy_(gradient);
    auto& bucket = m_buckets[m_slots[parameterIndex].bucket];
    if (--bucket.pending == 0) launch(bucket);
}

void GradientSynchronizer::launch(Bucket& bucket)
{
    bucket.launched = true;
    if (m_sharedMemory) {
        // Synchronous: same-host peers reach the same bucket at about the same time, and there is no
        // transport to overlap with.
        m_sharedMemory->sumInPlace(bucket.flat);
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

void GradientSynchronizer::finish()
{
    if (!m_communicator.distributed()) return;
    torch::NoGradGuard noGrad;
    // A parameter that got no gradient this step (unused in forward) contributes zeros; buckets are
    // launched in index order, which is the same on every rank.
    for (auto& bucket : m_buckets) {
        if (!bucket.launched) {
            for (const std::size_t index : bucket.members) {
                if (!m_parameters[index].grad().defined()) view(index).zero_();
            }
            launch(bucket);
        }
    }
    const double worldSize = m_communicator.worldSize();
    for (auto& bucket : m_buckets) {
        waitWork(bucket.work, "gradient all-reduce");
        bucket.flat.div_(worldSize);
        for (const std::size_t index : bucket.members) {
            auto& grad = m_parameters[index].mutable_grad();
            if (grad.defined()) {
                grad.copy_(view(index));
            } else {
                grad = view(index).clone();
            }
        }
    }
}

} // namespace ringmaster::trainer
