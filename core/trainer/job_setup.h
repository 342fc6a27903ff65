#pragma once
// What a training rank and a --probe both build from the flags: the data (read, split, checked), the
// loss that follows its labels, and the model shaped by it. A TorchScript model is loaded and run once
// on the first batch, so a wrong output shape is one clear line before any training.

#include <memory>

#include "trainer/config.h"
#include "trainer/data/training_data.h"
#include "trainer/loss.h"
#include "trainer/models.h"

namespace ringmaster::trainer {

class ScriptedModel;

struct PreparedData
{
    TrainingData data;
    LossKind loss = LossKind::CrossEntropy;
};

// Throws UsageError naming the flag and the problem.
PreparedData prepareData(const TrainerConfig& config);

struct PreparedModel
{
    std::shared_ptr<Model> model;
    std::shared_ptr<ScriptedModel> scripted; // set when --model is a TorchScript file
    std::vector<std::int64_t> firstOutputShape; // the shape of the check batch's output (TorchScript), else empty
};

// A built-in model shaped by the data, or the TorchScript file checked on up to `checkRows` samples.
// `device` is where the data already is. Throws UsageError.
PreparedModel prepareModel(const TrainerConfig& config, const PreparedData& prepared, const torch::Device& device,
                           std::int64_t checkRows);

} // namespace ringmaster::trainer
