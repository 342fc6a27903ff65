#include "trainer/preflight_checks.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "trainer/dist_env.h"
#include "trainer/errors.h"
#include "trainer/job_setup.h"
#include "trainer/models/scripted_model.h"
#include "trainer/sampler.h"

namespace ringmaster::trainer {
namespace {

std::string dtypeName(const torch::Tensor& tensor)
{
    return tensor.scalar_type() == torch::kUInt8 ? "uint8" : tensor.is_floating_point() ? "float32" : "int64";
}

nlohmann::json describeData(const TrainingData& data)
{
    const auto& targets = data.train.targets;
    return {
        {"format", formatName(data.format)},
        {"path", data.path},
        {"train_samples", data.train.size()},
        {"val_samples", data.val.size()},
        {"val_source", data.valSource},
        {"input_shape", data.sampleShape},
        {"input_dtype", dtypeName(data.train.inputs)},
        {"classes", data.classNames},
        {"class_count", data.classCount},
        {"target_shape", std::vector<std::int64_t>(targets.sizes().begin() + 1, targets.sizes().end())},
        {"normalize", {{"mean", data.mean}, {"std", data.std}, {"source", data.normalization}}},
        {"description", data.description},
    };
}

} // namespace

std::int64_t requireBatchFitsShard(const TrainerConfig& config, std::int64_t trainSamples, int worldSize)
{
    const DistributedSampler probe(trainSamples, worldSize, 0, true, config.seed, config.dropLast);
    if (config.batchSize > probe.numSamples()) {
        throw UsageError("--batch-size " + std::to_string(config.batchSize) + " is larger than each rank's shard of " +
                         std::to_string(probe.numSamples()) + " samples (" + std::to_string(trainSamples) +
                         " split over a world size of " + std::to_string(worldSize) +
                         "), so every epoch would be one partial batch: use at most " +
                         std::to_string(probe.numSamples()));
    }
    return probe.numSamples();
}

void requireCheckpointFits(const CheckpointHeader& header, const TrainerConfig& config, const std::string& path)
{
    // A TorchScript model may be given by another path on resume: names and shapes are checked on load.
    const bool bothFiles = !isBuiltinModel(header.model) && !isBuiltinModel(config.model);
    if (header.model != config.model && !bothFiles) {
        throw UsageError("--resume " + path + ": checkpoint holds model '" + header.model + "' but --model is '" +
                         config.model + "' (resume with --model " + header.model + ")");
    }
    if (header.optimizer != config.optimizer) {
        throw UsageError("--resume " + path + ": checkpoint was trained with --optimizer " + header.optimizer +
                         ", not " + config.optimizer);
    }
}

void runValidateOnly(const TrainerConfig& config)
{
    const int worldSize = readWorldSize();
    const PreparedData prepared = prepareData(config);
    requireBatchFitsShard(config, prepared.data.train.size(), worldSize);
    const auto rows = std::min(config.batchSize, prepared.data.train.size());
    const PreparedModel model = prepareModel(config, prepared, torch::kCPU, rows);
    if (!config.resume.empty()) {
        // The checkpoint the ranks would load (the newest intact one of a run directory), checked now:
        // a damaged or mismatched one is bad input before launch, not a failure after it.
        const auto path = resolveCheckpoint(config.resume);
        requireCheckpointFits(readCheckpointHeader(path), config, path);
    }
    if (!config.probe) {
        std::printf("ok\n");
        return;
    }
    std::vector<std::int64_t> outputShape = model.firstOutputShape;
    if (outputShape.empty()) {
        torch::NoGradGuard noGrad;
        model.model->eval();
        const auto indices = torch::arange(rows, torch::kLong);
        outputShape = model.model->forward(prepared.data.inputsAt(prepared.data.train, indices)).sizes().vec();
    }
    std::int64_t parameters = 0;
    for (const auto& p : model.model->parameters()) parameters += p.numel();
    const nlohmann::json probe = {
        {"data", describeData(prepared.data)},
        {"model", {{"name", config.model}, {"kind", model.scripted ? "torchscript" : "builtin"},
                   {"parameters", parameters}, {"output_shape", outputShape}, {"loss", lossName(prepared.loss)}}},
        {"world_size", worldSize},
    };
    std::printf("%s\n", probe.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

} // namespace ringmaster::trainer
