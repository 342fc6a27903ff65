#pragma once
// MNIST-format IDX folders (the built-in Fashion-MNIST among them): train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each optionally .gz. Images
// come back as they are stored, uint8 [N, 1, H, W]; scaling and standardisation happen per batch.

#include <cstdint>
#include <string>

#include "trainer/data/loaded_data.h"

namespace ringmaster::trainer {

inline constexpr const char* kFashionMnistName = "fashion-mnist";
inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
// Fashion-MNIST's documented training-set statistics of pixels scaled to [0, 1].
inline constexpr double kFashionMnistMean = 0.2860;
inline constexpr double kFashionMnistStd = 0.3530;

// "fashion-mnist" -> the Debian package's folder; anything else is returned as given.
std::string idxFolderPath(const std::string& data);

// True when `dir` holds train-images-idx3-ubyte[.gz].
bool looksLikeIdxFolder(const std::string& dir);

// One split: prefix "train" or "t10k". Throws UsageError naming the missing, corrupt or
// disagreeing file.
LoadedData readIdxSplit(const std::string& dir, const std::string& prefix, const std::string& flag);

// Reads one IDX file (gzip'd or not) into a uint8 tensor of its declared shape.
torch::Tensor readIdxFile(const std::string& path, int expectedDims);

} // namespace ringmaster::trainer
