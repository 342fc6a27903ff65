#include "trainer/models.h"

#include "trainer/errors.h"
#include "protocol/trainer_options.h"

namespace ringmaster::trainer {

namespace F = torch::nn::functional;

namespace {

constexpr std::int64_t kMlpHidden = 256;
constexpr std::int64_t kCnnHidden = 128;
constexpr std::int64_t kCnnPoolFactor = 4; // two 2x2 max-pools

} // namespace

std::int64_t ModelShape::features() const
{
    std::int64_t product = 1;
    for (const auto dim : sample) product *= dim;
    return product;
}

LinearModel::LinearModel(const ModelShape& shape)
{
    m_fc = register_module("fc", torch::nn::Linear(shape.features(), shape.outputs));
}

torch::Tensor LinearModel::forward(torch::Tensor input)
{
    return m_fc->forward(input.dim() > 2 ? input.flatten(1) : input);
}

MlpModel::MlpModel(const ModelShape& shape)
{
    m_fc1 = register_module("fc1", torch::nn::Linear(shape.features(), kMlpHidden));
    m_fc2 = register_module("fc2", torch::nn::Linear(kMlpHidden, shape.outputs));
}

torch::Tensor MlpModel::forward(torch::Tensor input)
{
    auto x = input.flatten(1);
    x = m_fc1->forward(x).relu_();
    return m_fc2->forward(x);
}

CnnModel::CnnModel(const ModelShape& shape)
{
    const auto channels = shape.sample.at(0);
    const auto height = shape.sample.at(1) / kCnnPoolFactor;
    const auto width = shape.sample.at(2) / kCnnPoolFactor;
    m_conv1 = register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(channels, 16, 3).padding(1)));
    m_conv2 = register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 3).padding(1)));
    m_fc1 = register_module("fc1", torch::nn::Linear(32 * height * width, kCnnHidden));
    m_fc2 = register_module("fc2", torch::nn::Linear(kCnnHidden, shape.outputs));
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

std::shared_ptr<Model> makeModel(const std::string& name, const ModelShape& shape)
{
    if (name == "linear") return std::make_shared<LinearModel>(shape);
    if (name == "mlp") return std::make_shared<MlpModel>(shape);
    if (name == "cnn") {
        const auto& s = shape.sample;
        if (s.size() != 3 || s[1] < kCnnPoolFactor || s[2] < kCnnPoolFactor) {
            std::string text;
            for (const auto dim : s) text += (text.empty() ? "" : "x") + std::to_string(dim);
            throw UsageError("--model cnn needs images of [channels, height, width] of at least 4x4, but each sample is " +
                             text + ": use --model mlp or linear, or --image-size");
        }
        return std::make_shared<CnnModel>(shape);
    }
    throw UsageError("--model: unknown model '" + name + "' (valid: " + protocol::trainerOption("model").choices + ")");
}

void preferChannelsLast(torch::nn::Module& module)
{
    torch::NoGradGuard noGrad;
    for (auto& param : module.parameters()) {
        if (param.dim() == 4) param.set_data(param.contiguous(torch::MemoryFormat::ChannelsLast));
    }
}

} // namespace ringmaster::trainer
