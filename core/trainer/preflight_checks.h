#pragma once
// The checks a starting rank and --validate-only / --probe share, so pre-flight refuses exactly what a
// rank would: the batch against a rank's shard, the checkpoint against the model and optimizer, and the
// whole data + model set-up. --probe also describes what it found, as one JSON line for the GUI.

#include <cstdint>
#include <string>

#include "trainer/checkpoint.h"
#include "trainer/config.h"

namespace ringmaster::trainer {

// Training keeps the last, partial batch of an epoch; a batch larger than a rank's shard would make
// every epoch one partial batch: refused. Returns the shard size. Throws UsageError.
std::int64_t requireBatchFitsShard(const TrainerConfig& config, std::int64_t trainSamples, int worldSize);

// The checkpoint was written by the same kind of model and optimizer as this run asks for.
void requireCheckpointFits(const CheckpointHeader& header, const TrainerConfig& config, const std::string& path);

// --validate-only (prints "ok") and --probe (prints the JSON line). World size from WORLD_SIZE (else
// SLURM_NTASKS, else 1). Throws UsageError.
void runValidateOnly(const TrainerConfig& config);

} // namespace ringmaster::trainer
