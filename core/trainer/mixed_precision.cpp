#include "trainer/mixed_precision.h"

#include <cmath>

#include <ATen/autocast_mode.h>

#include "trainer/compat.h"
#include "trainer/log.h"

namespace ringmaster::trainer {

Precision parsePrecision(const std::string& name)
{
    if (name == "bf16") return Precision::Bf16;
    if (name == "fp16") return Precision::Fp16;
    return Precision::Fp32;
}

AutocastScope::AutocastScope(const torch::Device& device, Precision precision)
    : m_active(precision != Precision::Fp32)
    , m_type(device.type())
{
    if (!m_active) return;
    m_wasEnabled = compat::autocastEnabled(m_type);
    m_oldDtype = compat::autocastDtype(m_type);
    compat::setAutocast(m_type, true, precision == Precision::Bf16 ? torch::kBFloat16 : torch::kFloat16);
    at::autocast::increment_nesting();
}

AutocastScope::~AutocastScope()
{
    if (!m_active) return;
    // As torch.autocast.__exit__: the outermost scope drops the down-cast weights it cached.
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    compat::setAutocast(m_type, m_wasEnabled, m_oldDtype);
}

LossScaler::LossScaler(bool enabled, LossScalerOptions options)
    : m_enabled(enabled)
    , m_options(options)
    , m_scale(static_cast<float>(options.initScale))
{
}

torch::Tensor LossScaler::scaled(const torch::Tensor& loss) const
{
    if (!m_enabled) return loss;
    return loss * torch::full({}, m_scale, loss.options().dtype(torch::kFloat32));
}

bool LossScaler::step(torch::optim::Optimizer& optimizer, std::int64_t stepNumber)
{
    if (!m_enabled) {
        optimizer.step();
        return true;
    }
    const bool finite = unscaleAndCheck(optimizer);
    if (finite) optimizer.step();
    const float before = m_scale;
    update(finite);
    if (!finite) {
        ++m_skippedSteps;
        log::info("fp16: inf/NaN gradients at step {}: step skipped, loss scale {:g} -> {:g}", stepNumber, before, m_scale);
    } else if (m_scale != before) {
        log::info("fp16: {} finite steps in a row at step {}: loss scale {:g} -> {:g}", m_options.growthInterval,
                  stepNumber, before, m_scale);
    }
    return finite;
}

bool LossScaler::unscaleAndCheck(torch::optim::Optimizer& optimizer) const
{
    // GradScaler takes the reciprocal in double, then rounds it to float: the same factor, bit for bit.
    const auto inverse = static_cast<float>(1.0 / static_cast<double>(m_scale));
    torch::NoGradGuard noGrad;
    torch::Tensor finite;
    for (auto& group : optimizer.param_groups()) {
        for (auto& parameter : group.params()) {
            auto& grad = parameter.mutable_grad();
            if (!grad.defined()) continue;
            grad.mul_(inverse);
            const auto all = grad.isfinite().all();
            finite = finite.defined() ? finite.logical_and(all) : all;
        }
    }
    return !finite.defined() || finite.item<bool>();
}

void LossScaler::update(bool finite)
{
    // torch._amp_update_scale_, in the same float arithmetic.
    if (!finite) {
        m_scale = m_scale * static_cast<float>(m_options.backoffFactor);
        m_growthTracker = 0;
        return;
    }
    if (++m_growthTracker == m_options.growthInterval) {
        const float grown = m_scale * static_cast<float>(m_options.growthFactor);
        if (std::isfinite(grown)) m_scale = grown;
        m_growthTracker = 0;
    }
}

void LossScaler::restore(const LossScalerState& state)
{
    if (!m_enabled || !(state.scale > 0.0)) return;
    m_scale = static_cast<float>(state.scale);
    m_growthTracker = state.growthTracker;
}

} // namespace ringmaster::trainer
