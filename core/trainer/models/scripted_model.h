#pragma once
// A user's own model: a TorchScript module saved in Python (torch.jit.save of a scripted or traced
// module), trained exactly like a built-in one. Its parameters and buffers are mirrored, by the same
// tensors, into a tree of plain torch::nn::Module nodes named like the TorchScript submodules, so the
// optimizer, the gradient buckets, the broadcasts and the checkpoints, which all take an nn::Module,
// work on it unchanged and every optimizer step lands in the TorchScript module itself. That module is
// what RUN_DIR/model.torchscript.pt saves. Bad files (not TorchScript, frozen, wrong output shape) are
// UsageErrors: one line, exit 2.

#include <string>

#include <torch/script.h>
#include <torch/torch.h>

#include "../models.h"

namespace ringmaster::trainer {

class ScriptedModel final : public Model
{
public:
    ScriptedModel(torch::jit::Module module, Task task);
    torch::Tensor forward(torch::Tensor input) override;
    Task task() const override { return m_task; }
    // Switches the TorchScript module too (dropout, batch norm follow train()/eval()).
    void train(bool on = true) override;
    // The trained module, loadable by torch.jit.load; written atomically. Throws IoError.
    void saveTorchScript(const std::string& path);

private:
    torch::jit::Module m_module;
    Task m_task;
};

// Loads PATH onto `device` and makes every parameter trainable. Throws UsageError when PATH is not a
// TorchScript file or has no parameters (a torch.jit.freeze'd module).
std::shared_ptr<ScriptedModel> loadScriptedModel(const std::string& path, const torch::Device& device, Task task);

// One forward (eval mode, no gradient) on `inputs`, checking the output's shape against `targets`:
// [N, classes] for class labels, the targets' shape for regression. Throws UsageError naming both.
void checkModelOutput(Model& model, const std::string& path, const torch::Tensor& inputs,
                      const torch::Tensor& targets, std::int64_t classes);

// Every parameter's and buffer's name and shape, hashed: equal on every rank when all loaded one model.
std::string modelSignature(torch::nn::Module& model);

} // namespace ringmaster::trainer
