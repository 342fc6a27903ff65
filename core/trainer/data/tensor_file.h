#pragma once
// Tensor files written in Python by torch.save({"x": X, "y": Y}, path), read with torch::pickle_load:
// x float32/float64/uint8 [N, ...] (float64 becomes float32; uint8 stays uint8), y int64 [N] class
// labels (any integer type) or float [N] / [N, K] targets. Used as given: no scaling here.

#include <string>

#include "trainer/data/loaded_data.h"

namespace ringmaster::trainer {

// Throws UsageError naming the file: not a torch.save file, not a dict with tensors "x" and "y", x and y
// of different lengths, NaN or infinity in x, negative class labels, no samples.
LoadedData readTensorFile(const std::string& path, const std::string& flag);

} // namespace ringmaster::trainer
