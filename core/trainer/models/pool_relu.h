#pragma once
// relu(max_pool2d(x, 2)) as one pass, forward and backward, for the cnn's channels-last activations on CPU.
//
// Why: at 1 thread the cnn spent 12% of its step in LibTorch 1.13's max-pooling (forward and backward of both
// pools, measured with torch.profiler on the same LibTorch), a memory-bound operation that its kernel does
// with 64-bit indices per output, a separate zero fill of the input gradient and a separate ReLU. Here each
// output remembers which of its four inputs won in one byte, the ReLU is applied on the way out, and the
// backward writes every input gradient exactly once (the winner gets the gradient, the other three zero).
//
// Exactly PyTorch's values, not approximately: the window is scanned in PyTorch's order ((0,0), (0,1), (1,0),
// (1,1)) with its rule (a later value wins when it is greater or NaN), so ties and NaNs pick the same input;
// the ReLU keeps NaN and -0 as PyTorch's does; its gradient is PyTorch's threshold_backward on the output (zero where the output is
// <= 0); a zero gradient is +0 as PyTorch's zero-fill-then-add gives. tests/trainer/test_pool_relu.py checks
// values and gradients bit for bit against torch.nn.functional on data full of ties, zeros and NaNs.
//
// Any other input (NCHW, CUDA, not float32) goes to max_pool2d(x, 2).relu_() unchanged. Odd heights and
// widths drop the last row or column as max_pool2d does (floor mode); their gradient is zero.

#include <torch/torch.h>

namespace ringmaster::trainer {

torch::Tensor maxPool2x2Relu(const torch::Tensor& input);

} // namespace ringmaster::trainer
