#include "trainer/job_setup.h"

#include "trainer/errors.h"
#include "trainer/models/scripted_model.h"

namespace ringmaster::trainer {

PreparedData prepareData(const TrainerConfig& config)
{
    DataOptions options;
    options.data = config.data;
    options.valData = config.valData;
    options.valSplit = config.valSplit;
    options.labelColumn = config.labelColumn;
    options.imageSize = parseImageSize(config.imageSize);
    options.normalize = config.normalize;
    options.syntheticSamples = config.syntheticSamples;
    options.seed = config.seed;
    options.cacheDir = config.dataCache;
    PreparedData prepared;
    prepared.data = loadTrainingData(options);
    prepared.loss = chooseLoss(config.loss, prepared.data);
    return prepared;
}

PreparedModel prepareModel(const TrainerConfig& config, const PreparedData& prepared, const torch::Device& device,
                           std::int64_t checkRows)
{
    const auto& data = prepared.data;
    const auto outputs = outputWidth(prepared.loss, data);
    PreparedModel result;
    if (isBuiltinModel(config.model)) {
        result.model = makeModel(config.model, ModelShape{data.sampleShape, outputs});
        result.model->to(device);
        return result;
    }
    result.scripted = loadScriptedModel(config.model, device);
    result.model = result.scripted;
    const auto rows = std::min(checkRows, data.train.size());
    // Indices live where the data does (on the host with --data-placement host), the batch goes to `device`.
    const auto indices = torch::arange(rows, torch::TensorOptions().dtype(torch::kLong).device(data.dataDevice()));
    const bool classes = prepared.loss == LossKind::CrossEntropy;
    const std::string because = classes ? "the labels have " + std::to_string(outputs) + " classes"
                                        : "the targets have " + std::to_string(outputs) + " column(s) (--loss " +
                                              lossName(prepared.loss) + ")";
    const auto output = checkModelOutput(*result.model, config.model, data.inputsAt(data.train, indices),
                                         {rows, outputs}, because);
    result.firstOutputShape = output.sizes().vec();
    return result;
}

} // namespace ringmaster::trainer
