#include "models.h"

#include "errors.h"

namespace ringmaster::trainer {

namespace F = torch::nn::functional;

LinearModel::LinearModel()
{
    m_fc = register_module("fc", torch::nn::Linear(10, 1));
}

torch::Tensor LinearModel::forward(torch::Tensor input)
{
    return m_fc->forward(input);
}

MlpModel::MlpModel()
{
    m_fc1 = register_module("fc1", torch::nn::Linear(28 * 28, 256));
    m_fc2 = register_module("fc2", torch::nn::Linear(256, 10));
}

torch::Tensor MlpModel::forward(torch::Tensor input)
{
    auto x = input.flatten(1);
    x = m_fc1->forward(x).relu_();
    return m_fc2->forward(x);
}

CnnModel::CnnModel()
{
    m_conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 3).padding(1)));
    m_conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)));
    m_fc1 = register_module("fc1", torch::nn::Linear(32 * 7 * 7, 128));
    m_fc2 = register_module("fc2", torch::nn::Linear(128, 10));
}

torch::Tensor CnnModel::forward(torch::Tensor input)
{
    // max_pool then relu equals relu then max_pool exactly (relu is monotonic), on a quarter of the
    // elements: the same model as the documented order, just cheaper.
    auto x = F::max_pool2d(m_conv1->forward(input), F::MaxPool2dFuncOptions(2)).relu_();
    x = F::max_pool2d(m_conv2->forward(x), F::MaxPool2dFuncOptions(2)).relu_();
    x = m_fc1->forward(x.flatten(1)).relu_();
    return m_fc2->forward(x);
}

std::shared_ptr<Model> makeModel(const std::string& name)
{
    if (name == "linear") return std::make_shared<LinearModel>();
    if (name == "mlp") return std::make_shared<MlpModel>();
    if (name == "cnn") return std::make_shared<CnnModel>();
    throw UsageError("--model: unknown model '" + name + "' (valid: linear|mlp|cnn)");
}

} // namespace ringmaster::trainer
