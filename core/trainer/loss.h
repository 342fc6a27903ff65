#pragma once
// The loss follows the labels: class labels -> cross-entropy (mean), float targets -> MSE, unless
// --loss says cross_entropy|mse|bce. BCE takes logits (binary_cross_entropy_with_logits) and 0/1
// targets. Accuracy exists for cross-entropy (argmax) and BCE (logit > 0, per output).

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "trainer/data/training_data.h"

namespace ringmaster::trainer {

enum class LossKind { CrossEntropy, Mse, Bce };
const char* lossName(LossKind kind);

// Resolves --loss against the data and converts the targets the loss needs (MSE/BCE: float [N, K]).
// Throws UsageError when they cannot go together (cross-entropy on float targets, BCE on labels
// other than 0 and 1).
LossKind chooseLoss(const std::string& flag, TrainingData& data);

// The model's output width: classes for cross-entropy, target columns otherwise.
std::int64_t outputWidth(LossKind kind, const TrainingData& data);

// Mean (or, with `sum`, summed over samples) loss of a batch. A 1-D output of B values is taken as [B, 1].
torch::Tensor lossOf(LossKind kind, const torch::Tensor& output, const torch::Tensor& target, bool sum);

bool hasAccuracy(LossKind kind);
// Correct predictions in the batch, as a fraction of a sample each (BCE: mean over the outputs).
torch::Tensor correctCount(LossKind kind, const torch::Tensor& output, const torch::Tensor& target);

} // namespace ringmaster::trainer
