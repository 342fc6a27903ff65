#include "trainer/foreach_sgd.h"

#include <vector>

#include <torch/version.h>

namespace ringmaster::trainer {
namespace {

// The key of a parameter's state: 1.13 names the TensorImpl's address as a string, 2.x keeps the address.
auto stateKey(const torch::Tensor& parameter)
{
#if TORCH_VERSION_MAJOR >= 2
    return static_cast<void*>(parameter.unsafeGetTensorImpl());
#else
    return c10::guts::to_string(parameter.unsafeGetTensorImpl());
#endif
}

} // namespace

torch::Tensor ForeachSgd::step(LossClosure closure)
{
    torch::NoGradGuard noGrad;
    torch::Tensor loss;
    if (closure) {
        at::AutoGradMode enableGrad(true);
        loss = closure();
    }
    for (auto& group : param_groups()) {
        const auto& options = static_cast<const torch::optim::SGDOptions&>(group.options());
        // As SGD::step: parameters without a gradient this step are skipped, their state untouched.
        std::vector<torch::Tensor> params;
        std::vector<torch::Tensor> grads;
        for (const auto& p : group.params()) {
            if (!p.grad().defined()) continue;
            params.push_back(p);
            grads.push_back(p.grad());
        }
        if (params.empty()) continue;
        if (options.weight_decay() != 0) grads = at::_foreach_add(grads, params, options.weight_decay());
        if (options.momentum() != 0) {
            // A parameter's first step takes its (decayed) gradient as its buffer; later steps decay the buffer.
            std::vector<torch::Tensor> buffers;
            std::vector<torch::Tensor> continuing;
            std::vector<torch::Tensor> continuingGrads;
            buffers.reserve(params.size());
            for (std::size_t i = 0; i < params.size(); ++i) {
                const auto key = stateKey(params[i]);
                auto found = state_.find(key);
                if (found == state_.end()) {
                    auto state = std::make_unique<torch::optim::SGDParamState>();
                    state->momentum_buffer(torch::clone(grads[i]).detach());
                    buffers.push_back(state->momentum_buffer());
                    state_[key] = std::move(state);
                } else {
                    auto buffer = static_cast<torch::optim::SGDParamState&>(*found->second).momentum_buffer();
                    buffers.push_back(buffer);
                    continuing.push_back(buffer);
                    continuingGrads.push_back(grads[i]);
                }
            }
            if (!continuing.empty()) {
                at::_foreach_mul_(continuing, options.momentum());
                at::_foreach_add_(continuing, continuingGrads, 1 - options.dampening());
            }
            if (options.nesterov()) grads = at::_foreach_add(grads, buffers, options.momentum());
            else grads = buffers;
        }
        at::_foreach_add_(params, grads, -1 * options.lr());
    }
    return loss;
}

} // namespace ringmaster::trainer
