#include "trainer/models/scripted_model.h"

#include <fstream>
#include <iterator>
#include <sstream>

#include "trainer/atomic_file.h"
#include "trainer/errors.h"
#include "trainer/hash64.h"
#include "trainer/zip_records.h"

namespace ringmaster::trainer {
namespace {

// Registers `source`'s own parameters and buffers (the same tensors, not copies) in `target`, and a
// child node per TorchScript submodule, so named_parameters() gives "fc1.weight" as Python does.
void mirrorInto(torch::nn::Module& target, const torch::jit::Module& source)
{
    for (const auto& param : source.named_parameters(/*recurse=*/false)) {
        target.register_parameter(param.name, param.value, /*requires_grad=*/true);
    }
    for (const auto& buffer : source.named_buffers(/*recurse=*/false)) {
        target.register_buffer(buffer.name, buffer.value);
    }
    for (const auto& child : source.named_children()) {
        auto node = std::make_shared<torch::nn::Module>();
        mirrorInto(*node, child.value);
        target.register_module(child.name, node);
    }
}

std::string shapeText(const torch::IntArrayRef& sizes)
{
    std::string text = "[";
    for (std::size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
    return text + "]";
}

} // namespace

ScriptedModel::ScriptedModel(torch::jit::Module module)
    : m_module(std::move(module))
{
    mirrorInto(*this, m_module);
}

torch::Tensor ScriptedModel::forward(torch::Tensor input)
{
    return m_module.forward({std::move(input)}).toTensor();
}

void ScriptedModel::train(bool on)
{
    torch::nn::Module::train(on);
    m_module.train(on);
}

void ScriptedModel::saveTorchScript(const std::string& path)
{
    std::ostringstream bytes;
    m_module.save(bytes);
    writeFileAtomically(path, bytes.str());
}

std::shared_ptr<ScriptedModel> loadScriptedModel(const std::string& path, const torch::Device& device)
{
    torch::jit::Module module;
    // Read once: the bytes checked are the bytes loaded (the file may change in between). LibTorch allocates what
    // the archive's directory and pickles say before it reads them (zip_directory.h).
    std::string bytes;
    {
        std::ifstream in(path, std::ios::binary);
        if (!in) throw UsageError("--model " + path + ": cannot be read");
        bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        if (in.bad()) throw UsageError("--model " + path + ": cannot be read");
    }
    if (const std::string damage = zipRecordDamage(bytes.data(), bytes.size()); !damage.empty()) {
        throw UsageError("--model " + path + ": not a usable TorchScript file (" + damage +
                         "); save one in Python with torch.jit.save(torch.jit.script(model), PATH)");
    }
    try {
        std::istringstream stream(std::move(bytes));
        module = torch::jit::load(stream, device);
    } catch (const std::exception& e) {
        throw UsageError("--model " + path + ": not a TorchScript file (" + oneLineMessage(e) +
                         "); save one in Python with torch.jit.save(torch.jit.script(model), PATH)");
    }
    if (module.parameters().size() == 0) {
        throw UsageError("--model " + path + ": the module has no parameters to train (torch.jit.freeze turns them into "
                         "constants); save the module before freezing it");
    }
    return std::make_shared<ScriptedModel>(std::move(module));
}

torch::Tensor checkModelOutput(Model& model, const std::string& path, const torch::Tensor& inputs,
                               const std::vector<std::int64_t>& expected, const std::string& because)
{
    torch::Tensor output;
    {
        torch::NoGradGuard noGrad;
        model.eval();
        try {
            output = model.forward(inputs);
        } catch (const std::exception& e) {
            model.train();
            throw UsageError("--model " + path + ": forward on a batch of " + shapeText(inputs.sizes()) +
                             " failed: " + oneLineMessage(e));
        }
        model.train();
    }
    // A regression model may return [B] for one target column.
    const bool oneColumn = expected.size() == 2 && expected[1] == 1 && output.dim() == 1 && output.size(0) == expected[0];
    if (output.sizes() != c10::IntArrayRef(expected) && !oneColumn) {
        throw UsageError("--model " + path + ": model outputs " + shapeText(output.sizes()) + " but " + because +
                         " (expected " + shapeText(expected) + ")");
    }
    return output;
}

std::string modelSignature(torch::nn::Module& model)
{
    std::string text;
    for (const auto& item : model.named_parameters()) text += "p:" + item.key() + shapeText(item.value().sizes()) + ";";
    for (const auto& item : model.named_buffers()) text += "b:" + item.key() + shapeText(item.value().sizes()) + ";";
    return hash64::hex64(hash64::fnv1a(text.data(), text.size()));
}

} // namespace ringmaster::trainer
