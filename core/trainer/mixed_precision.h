#pragma once
// Mixed precision (--precision fp32|bf16|fp16), written the way PyTorch users write it, so that a run gives the
// numbers their own loop would:
//  - AutocastScope is `with torch.autocast(device_type, dtype):` around the forward pass and the loss. Matrix
//    products and convolutions run in bf16 or fp16, the ops autocast keeps in fp32 (losses, softmax) stay there,
//    the parameters and their gradients stay fp32. Leaving the outermost scope drops the cache of down-cast
//    weights, as Python's does, so no step sees the weights of the one before.
//  - LossScaler is torch.amp.GradScaler for fp16 (bf16 has fp32's range and needs none): the loss is multiplied
//    by the scale before backward; after the all-reduce every gradient is multiplied by the fp32 reciprocal of
//    the scale and checked; a step with an inf or NaN gradient is skipped and the scale halved; after
//    `growthInterval` finite steps in a row it doubles. Its state (scale, finite steps in a row) goes into
//    checkpoints, so a resumed run scales as the straight one would. Every rank sees the same all-reduced
//    gradients, so every rank skips the same steps without a word between them.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace ringmaster::trainer {

enum class Precision { Fp32, Bf16, Fp16 };

// A --precision name, already validated (config.cpp checks the flag).
Precision parsePrecision(const std::string& name);

class AutocastScope
{
public:
    // No-op for fp32.
    AutocastScope(const torch::Device& device, Precision precision);
    ~AutocastScope();
    AutocastScope(const AutocastScope&) = delete;
    AutocastScope& operator=(const AutocastScope&) = delete;

private:
    bool m_active = false;
    c10::DeviceType m_type = c10::DeviceType::CPU;
    bool m_wasEnabled = false;
    c10::ScalarType m_oldDtype = c10::ScalarType::Float;
};

// GradScaler's defaults, as its constructor spells them.
struct LossScalerOptions
{
    double initScale = 65536.0;     // 2^16
    double growthFactor = 2.0;
    double backoffFactor = 0.5;
    std::int64_t growthInterval = 2000;
};

struct LossScalerState
{
    double scale = 0.0;             // 0: none (a checkpoint written without fp16)
    std::int64_t growthTracker = 0; // finite steps in a row since the scale last changed
};

class LossScaler
{
public:
    LossScaler(bool enabled, LossScalerOptions options);

    bool enabled() const { return m_enabled; }
    // loss × scale (the scale held in fp32, as GradScaler holds it); the loss itself when disabled.
    torch::Tensor scaled(const torch::Tensor& loss) const;
    // GradScaler.step then update, after the all-reduce: every gradient multiplied by the reciprocal of the scale
    // in place and checked (one host synchronisation); the optimizer's step unless one is inf or NaN; then
    // backoff, or growth after growthInterval finite steps in a row, each change logged with `stepNumber`.
    // Disabled: the optimizer's step, nothing else. Returns whether the step was taken.
    bool step(torch::optim::Optimizer& optimizer, std::int64_t stepNumber);

    std::int64_t skippedSteps() const { return m_skippedSteps; } // since this process started
    double scale() const { return m_scale; }
    LossScalerState state() const { return {m_scale, m_growthTracker}; }
    void restore(const LossScalerState& state);

private:
    bool unscaleAndCheck(torch::optim::Optimizer& optimizer) const;
    void update(bool finite);

    bool m_enabled;
    LossScalerOptions m_options;
    float m_scale;
    std::int64_t m_growthTracker = 0;
    std::int64_t m_skippedSteps = 0;
};

} // namespace ringmaster::trainer
