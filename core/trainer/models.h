#pragma once
// The built-in models. Parameter names match PyTorch's state_dict keys for the same definitions,
// so model.pt loads into the Python classes documented in the README.

#include <memory>
#include <string>

#include <torch/torch.h>

namespace ringmaster::trainer {

enum class Task { Classification, Regression };

class Model : public torch::nn::Module
{
public:
    virtual torch::Tensor forward(torch::Tensor input) = 0;
    virtual Task task() const = 0;
};

// nn.Linear(10, 1) on the synthetic regression.
class LinearModel final : public Model
{
public:
    LinearModel();
    torch::Tensor forward(torch::Tensor input) override;
    Task task() const override { return Task::Regression; }

private:
    torch::nn::Linear m_fc{nullptr};
};

// flatten, fc1 = Linear(784, 256), ReLU, fc2 = Linear(256, 10).
class MlpModel final : public Model
{
public:
    MlpModel();
    torch::Tensor forward(torch::Tensor input) override;
    Task task() const override { return Task::Classification; }

private:
    torch::nn::Linear m_fc1{nullptr};
    torch::nn::Linear m_fc2{nullptr};
};

// conv1 = Conv2d(1,16,3,padding=1), ReLU, MaxPool2d(2), conv2 = Conv2d(16,32,3,padding=1), ReLU,
// MaxPool2d(2), flatten, fc1 = Linear(32*7*7,128), ReLU, fc2 = Linear(128,10).
class CnnModel final : public Model
{
public:
    CnnModel();
    torch::Tensor forward(torch::Tensor input) override;
    Task task() const override { return Task::Classification; }

private:
    torch::nn::Conv2d m_conv1{nullptr};
    torch::nn::Conv2d m_conv2{nullptr};
    torch::nn::Linear m_fc1{nullptr};
    torch::nn::Linear m_fc2{nullptr};
};

// Throws UsageError for an unknown name.
std::shared_ptr<Model> makeModel(const std::string& name);

} // namespace ringmaster::trainer
