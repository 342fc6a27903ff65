#pragma once
// SGD (momentum, dampening, Nesterov, weight decay) that steps all of a group's parameters in a few
// multi-tensor operations (at::_foreach_*) instead of two or three operations per parameter: PyTorch's
// SGD(foreach=True), its default on CUDA since 2.0. On a GPU that is a handful of kernel launches a step
// whatever the parameter count (the cnn: 3 instead of 16; a ResNet-50: 3 lists instead of 322 launches);
// on a CPU ATen runs the same per-tensor arithmetic, so every number is torch::optim::SGD's, bit for bit
// (tests/trainer/test_foreach_sgd.py). The trainer uses it, as PyTorch does, when every parameter is on CUDA:
// on a CPU LibTorch 1.13's foreach kernels are a loop through the dispatcher and ran 3-5% slower at 1 rank.
//
// It is a torch::optim::SGD: options, parameter groups, learning-rate changes and the momentum buffers that
// checkpoints save and load are SGD's own, so checkpoints written by either resume in the other.

#include <torch/torch.h>

namespace ringmaster::trainer {

class ForeachSgd final : public torch::optim::SGD
{
public:
    using torch::optim::SGD::SGD;

    torch::Tensor step(LossClosure closure = nullptr) override;
};

} // namespace ringmaster::trainer
