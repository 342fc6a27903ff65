#pragma once
// The built-in models, shaped by the data: input channels, image size or feature count, and the output
// width (classes, or target columns). Parameter names match PyTorch's state_dict keys for the same
// definitions, so model.pt loads into the Python classes documented in docs/trainer.md.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace ringmaster::trainer {

class Model : public torch::nn::Module
{
public:
    virtual torch::Tensor forward(torch::Tensor input) = 0;
};

// What the data asks of a model: one sample's shape ({C, H, W} for images, {F} for features) and the
// output width (classes for cross-entropy, target columns for MSE/BCE).
struct ModelShape
{
    std::vector<std::int64_t> sample;
    std::int64_t outputs = 1;
    std::int64_t features() const; // product of `sample`
};

// fc = Linear(features, outputs) on flattened inputs (Linear(10, 1) on the synthetic regression).
class LinearModel final : public Model
{
public:
    explicit LinearModel(const ModelShape& shape);
    torch::Tensor forward(torch::Tensor input) override;

private:
    torch::nn::Linear m_fc{nullptr};
};

// flatten, fc1 = Linear(features, 256), ReLU, fc2 = Linear(256, outputs) (784-256-10 on Fashion-MNIST).
class MlpModel final : public Model
{
public:
    explicit MlpModel(const ModelShape& shape);
    torch::Tensor forward(torch::Tensor input) override;

private:
    torch::nn::Linear m_fc1{nullptr};
    torch::nn::Linear m_fc2{nullptr};
};

// conv1 = Conv2d(C,16,3,padding=1), ReLU, MaxPool2d(2), conv2 = Conv2d(16,32,3,padding=1), ReLU,
// MaxPool2d(2), flatten, fc1 = Linear(32*(H/4)*(W/4),128), ReLU, fc2 = Linear(128,outputs)
// (fc1 = Linear(32*7*7, 128) on 28x28 images).
class CnnModel final : public Model
{
public:
    explicit CnnModel(const ModelShape& shape);
    torch::Tensor forward(torch::Tensor input) override;

private:
    torch::nn::Conv2d m_conv1{nullptr};
    torch::nn::Conv2d m_conv2{nullptr};
    torch::nn::Linear m_fc1{nullptr};
    torch::nn::Linear m_fc2{nullptr};
};

// Throws UsageError for an unknown name or data the model cannot take (cnn needs [C, H, W] images of
// at least 4x4).
std::shared_ptr<Model> makeModel(const std::string& name, const ModelShape& shape);

// On CPU, oneDNN's convolutions run faster on channels-last (NHWC) tensors than on NCHW: conv1 3.0x and conv2
// 1.15x, forward and backward, on the cnn at 1 thread (docs/performance.md). Puts every 4-d parameter in that
// layout; only the layout changes, never the values. The trainer and the raw-step benchmark both use it.
void preferChannelsLast(torch::nn::Module& module);

} // namespace ringmaster::trainer
