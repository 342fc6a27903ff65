#include "trainer/loss.h"

#include "trainer/errors.h"
#include "protocol/trainer_options.h"

namespace ringmaster::trainer {
namespace {

torch::Tensor asColumns(const torch::Tensor& output)
{
    return output.dim() == 1 ? output.unsqueeze(1) : output;
}

} // namespace

const char* lossName(LossKind kind)
{
    switch (kind) {
    case LossKind::CrossEntropy: return "cross_entropy";
    case LossKind::Mse: return "mse";
    case LossKind::Bce: return "bce";
    }
    return "?";
}

LossKind chooseLoss(const std::string& flag, TrainingData& data)
{
    const bool labels = data.classCount > 0;
    if (flag == "auto" || flag.empty()) return labels ? LossKind::CrossEntropy : LossKind::Mse;
    if (flag == "cross_entropy") {
        if (!labels) {
            throw UsageError("--loss cross_entropy needs class labels, but the data's targets are floats: use --loss mse "
                             "(or bce for 0/1 targets)");
        }
        return LossKind::CrossEntropy;
    }
    if (flag == "mse") {
        if (labels) data.targetsToFloat();
        return LossKind::Mse;
    }
    if (flag == "bce") {
        if (labels && data.classCount > 2) {
            throw UsageError("--loss bce needs 0/1 labels, but the data has " + std::to_string(data.classCount) +
                             " classes: use --loss cross_entropy");
        }
        if (labels) data.targetsToFloat();
        for (const auto* split : {&data.train, &data.val}) {
            if (split->size() == 0) continue;
            const auto& t = split->targets;
            if (t.lt(0).any().item<bool>() || t.gt(1).any().item<bool>()) {
                throw UsageError("--loss bce needs targets between 0 and 1; the data has values outside: use --loss mse");
            }
        }
        return LossKind::Bce;
    }
    throw UsageError("--loss: unknown value '" + flag + "' (valid: " + protocol::trainerOption("loss").choices + ")");
}

std::int64_t outputWidth(LossKind kind, const TrainingData& data)
{
    if (kind == LossKind::CrossEntropy) return data.classCount;
    return data.train.targets.dim() > 1 ? data.train.targets.size(1) : 1;
}

torch::Tensor lossOf(LossKind kind, const torch::Tensor& output, const torch::Tensor& target, bool sum)
{
    const auto reduction = sum ? at::Reduction::Sum : at::Reduction::Mean;
    switch (kind) {
    // cross_entropy_loss, not nll_loss(log_softmax): the same arithmetic, and autocast computes it in fp32 as
    // F.cross_entropy, where a bf16 log_softmax would stay bf16.
    case LossKind::CrossEntropy: return torch::cross_entropy_loss(output, target, {}, reduction);
    case LossKind::Mse: {
        // Per sample, the mean over its outputs; summed over samples when asked.
        const auto perSample = torch::mse_loss(asColumns(output), target, at::Reduction::None).mean(1);
        return sum ? perSample.sum() : perSample.mean();
    }
    case LossKind::Bce: {
        const auto perSample =
            torch::binary_cross_entropy_with_logits(asColumns(output), target, {}, {}, at::Reduction::None).mean(1);
        return sum ? perSample.sum() : perSample.mean();
    }
    }
    return {};
}

bool hasAccuracy(LossKind kind)
{
    return kind != LossKind::Mse;
}

torch::Tensor correctCount(LossKind kind, const torch::Tensor& output, const torch::Tensor& target)
{
    if (kind == LossKind::CrossEntropy) return output.argmax(1).eq(target).sum();
    return asColumns(output).gt(0).eq(target.gt(0.5)).to(torch::kFloat64).mean(1).sum();
}

} // namespace ringmaster::trainer
