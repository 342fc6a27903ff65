#pragma once
// The built-in regression: y = x . w + b + noise with x ~ N(0, 1)^10, w = 0.1 .. 1.0, b = 0.5, noise
// N(0, 0.01^2): what the linear model learns, generated from the seed (the same on every rank).

#include <cstdint>
#include <utility>

#include "trainer/data/loaded_data.h"

namespace ringmaster::trainer {

inline constexpr const char* kSyntheticName = "synthetic";

// Training (`samples`) and test (samples / 4, at least 1) splits: float32 x [N, 10], y [N, 1].
std::pair<LoadedData, LoadedData> makeSyntheticRegression(std::int64_t samples, std::uint64_t seed);

} // namespace ringmaster::trainer
