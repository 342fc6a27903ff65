#pragma once
// In-memory datasets: whole splits as two tensors, so a batch is one index_select, not a copy per sample.

#include <cstdint>
#include <string>

#include <torch/torch.h>

namespace ringmaster::trainer {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// Pixels are scaled to [0, 1], then standardised with Fashion-MNIST's training-set statistics.
inline constexpr double kPixelMean = 0.2860;
inline constexpr double kPixelStd = 0.3530;

struct TensorDataset
{
    torch::Tensor inputs;   // float32 [N, ...]
    torch::Tensor targets;  // int64 [N] (classes) or float32 [N, 1] (regression)
    std::int64_t size() const { return inputs.size(0); }
};

struct DataSplits
{
    TensorDataset train;
    TensorDataset test;
    std::string description;
};

// "fashion-mnist" (the Debian package's folder), or any folder with MNIST-format IDX files
// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-..., each optionally .gz).
// Throws UsageError naming the missing or corrupt file.
DataSplits loadImageClassification(const std::string& data);

// Checks that the four IDX files exist and their headers agree, without reading the pixels.
// Returns the number of training samples.
std::int64_t verifyImageClassification(const std::string& data);

// y = x . w + b + noise, with x ~ N(0, 1)^10: the regression the linear model learns.
DataSplits makeSyntheticRegression(std::int64_t samples, std::uint64_t seed);

// Reads one IDX file (gzip'd or not) into a uint8 tensor of its declared shape.
torch::Tensor readIdxFile(const std::string& path, int expectedDims);

} // namespace ringmaster::trainer
