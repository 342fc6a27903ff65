#pragma once
// A user's own model: a TorchScript module saved in Python (torch.jit.save of a scripted or traced
// module), trained exactly like a built-in one. Its parameters and buffers are mirrored, by the same
// tensors, into a tree of plain torch::nn::Module nodes named like the TorchScript submodules, so the
// optimizer, the gradient buckets, the broadcasts and the checkpoints, which all take an nn::Module,
// work on it unchanged and every optimizer step lands in the TorchScript module itself. That module is
// what RUN_DIR/model.torchscript.pt saves. Bad files (not TorchScript, frozen, wrong output shape) are
// UsageErrors: one line, exit 2.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/script.h>
#include <torch/torch.h>

#include "trainer/models.h"

namespace ringmaster::trainer {

class ScriptedModel final : public Model
{
public:
    explicit ScriptedModel(torch::jit::Module module);
    torch::Tensor forward(torch::Tensor input) override;
    // Switches the TorchScript module too (dropout, batch norm follow train()/eval()).
    void train(bool on = true) override;
    // The trained module, loadable by torch.jit.load; written atomically. Throws IoError.
    void saveTorchScript(const std::string& path);

private:
    torch::jit::Module m_module;
};

// Loads PATH onto `device` and makes every parameter trainable. Throws UsageError when PATH is not a
// TorchScript file or has no parameters (a torch.jit.freeze'd module).
std::shared_ptr<ScriptedModel> loadScriptedModel(const std::string& path, const torch::Device& device);

// One forward (eval mode, no gradient) on `inputs`, checking the output's shape: `expected` ([B, classes]
// or the targets' [B, K]), `because` says why ("the labels have 10 classes"). Throws UsageError naming
// both shapes; returns the output.
torch::Tensor checkModelOutput(Model& model, const std::string& path, const torch::Tensor& inputs,
                               const std::vector<std::int64_t>& expected, const std::string& because);

// Every parameter's and buffer's name and shape, hashed: equal on every rank when all loaded one model.
std::string modelSignature(torch::nn::Module& model);

} // namespace ringmaster::trainer
