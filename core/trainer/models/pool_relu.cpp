#include "pool_relu.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <ATen/Parallel.h>

namespace ringmaster::trainer {
namespace {

// Rows of outputs (one batch item, one output row) per parallel task: a few kB of work each.
constexpr std::int64_t kRowsPerTask = 16;

struct Shape
{
    std::int64_t n, c, h, w, oh, ow;
    explicit Shape(const torch::Tensor& input)
        : n(input.size(0)), c(input.size(1)), h(input.size(2)), w(input.size(3)), oh(h / 2), ow(w / 2)
    {
    }
};

bool fastPathFits(const torch::Tensor& input)
{
    return input.device().is_cpu() && input.scalar_type() == torch::kFloat32 && input.dim() == 4 &&
           input.size(2) >= 2 && input.size(3) >= 2 && input.is_contiguous(torch::MemoryFormat::ChannelsLast);
}

// PyTorch's rule (MaxPoolKernel.cpp): a later value wins when greater, or when it is NaN.
inline bool wins(float candidate, float best)
{
    return candidate > best || std::isnan(candidate);
}

// `choice` may be null (no backward will follow).
void forwardKernel(const Shape& s, const float* in, float* out, std::uint8_t* choice)
{
    at::parallel_for(0, s.n * s.oh, kRowsPerTask, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t row = begin; row < end; ++row) {
            const std::int64_t n = row / s.oh, oh = row % s.oh;
            for (std::int64_t ow = 0; ow < s.ow; ++ow) {
                const float* p00 = in + ((n * s.h + 2 * oh) * s.w + 2 * ow) * s.c;
                const float* p01 = p00 + s.c;
                const float* p10 = p00 + s.w * s.c;
                const float* p11 = p10 + s.c;
                const std::int64_t at = ((n * s.oh + oh) * s.ow + ow) * s.c;
                for (std::int64_t c = 0; c < s.c; ++c) {
                    float best = p00[c];
                    std::uint8_t which = 0;
                    if (wins(p01[c], best)) best = p01[c], which = 1;
                    if (wins(p10[c], best)) best = p10[c], which = 2;
                    if (wins(p11[c], best)) best = p11[c], which = 3;
                    out[at + c] = best < 0.0f ? 0.0f : best; // PyTorch's ReLU: NaN and -0 stay as they are
                    if (choice) choice[at + c] = which;
                }
            }
        }
    });
}

void backwardKernel(const Shape& s, const float* gradOut, const float* out, const std::uint8_t* choice, float* gradIn)
{
    at::parallel_for(0, s.n * s.h, kRowsPerTask, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t row = begin; row < end; ++row) {
            const std::int64_t n = row / s.h, ih = row % s.h;
            float* dst = gradIn + (n * s.h + ih) * s.w * s.c;
            if (ih / 2 >= s.oh) { // the row floor mode dropped
                std::fill(dst, dst + s.w * s.c, 0.0f);
                continue;
            }
            const std::uint8_t rowBit = static_cast<std::uint8_t>((ih % 2) * 2);
            for (std::int64_t iw = 0; iw < s.w; ++iw) {
                float* d = dst + iw * s.c;
                if (iw / 2 >= s.ow) { // the column floor mode dropped
                    std::fill(d, d + s.c, 0.0f);
                    continue;
                }
                const std::uint8_t mine = static_cast<std::uint8_t>(rowBit + iw % 2);
                const std::int64_t at = ((n * s.oh + ih / 2) * s.ow + iw / 2) * s.c;
                for (std::int64_t c = 0; c < s.c; ++c) {
                    // threshold_backward on the ReLU's output, then max_pool's zero fill plus the gradient: + 0.0f
                    // turns a -0 gradient into the +0 that 0 + (-0) gives in PyTorch.
                    const float g = out[at + c] <= 0.0f ? 0.0f : gradOut[at + c] + 0.0f;
                    d[c] = choice[at + c] == mine ? g : 0.0f;
                }
            }
        }
    });
}

torch::Tensor forwardOnly(const torch::Tensor& input, torch::Tensor* choice)
{
    const Shape s(input);
    auto output = torch::empty({s.n, s.c, s.oh, s.ow}, input.options().memory_format(torch::MemoryFormat::ChannelsLast));
    std::uint8_t* choiceData = nullptr;
    if (choice) {
        *choice = torch::empty({s.n, s.c, s.oh, s.ow},
                               input.options().dtype(torch::kUInt8).memory_format(torch::MemoryFormat::ChannelsLast));
        choiceData = choice->data_ptr<std::uint8_t>();
    }
    forwardKernel(s, input.data_ptr<float>(), output.data_ptr<float>(), choiceData);
    return output;
}

class MaxPool2x2ReluFunction : public torch::autograd::Function<MaxPool2x2ReluFunction>
{
public:
    static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& input)
    {
        torch::Tensor choice;
        auto output = forwardOnly(input, &choice);
        ctx->save_for_backward({output, choice});
        ctx->saved_data["input_sizes"] = input.sizes().vec();
        return output;
    }

    static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                   torch::autograd::variable_list gradOutputs)
    {
        const auto saved = ctx->get_saved_variables();
        const auto& output = saved[0];
        const auto& choice = saved[1];
        if (!gradOutputs[0].defined()) return {torch::Tensor()};
        // The pool after conv2 gets its gradient back through flatten(), in NCHW order: one small copy.
        const auto gradOut = gradOutputs[0].contiguous(torch::MemoryFormat::ChannelsLast);
        const auto sizes = ctx->saved_data["input_sizes"].toIntVector();
        auto gradIn = torch::empty(sizes, output.options().memory_format(torch::MemoryFormat::ChannelsLast));
        backwardKernel(Shape(gradIn), gradOut.data_ptr<float>(), output.data_ptr<float>(),
                       choice.data_ptr<std::uint8_t>(), gradIn.data_ptr<float>());
        return {gradIn};
    }
};

} // namespace

torch::Tensor maxPool2x2Relu(const torch::Tensor& input)
{
    if (!fastPathFits(input)) return torch::max_pool2d(input, 2).relu_();
    if (!(torch::GradMode::is_enabled() && input.requires_grad())) return forwardOnly(input, nullptr);
    return MaxPool2x2ReluFunction::apply(input);
}

} // namespace ringmaster::trainer
