#pragma once
// Checkpoints hold the model, the optimizer state and the loop position together, written atomically
// (temp file, fsync, rename): a crash mid-write never damages the previous checkpoint.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

namespace ringmaster::trainer {

struct LoopPosition
{
    std::int64_t step = 0;         // optimizer steps taken
    std::int64_t epoch = 0;        // epoch the next step belongs to
    std::int64_t batchInEpoch = 0; // batches of that epoch already taken
    std::uint64_t seed = 0;
    std::int64_t worldSize = 1;
    std::int64_t batchSize = 0;
    double wallTime = 0.0;         // seconds of training before this checkpoint (continues after resume)
};

struct CheckpointHeader
{
    std::string model;
    std::string optimizer;
    LoopPosition position;
};

// Writes RUN_DIR/checkpoints/step-NNNNNNNN.pt and removes all but the newest `keep`.
// Returns the path written.
std::string saveCheckpoint(const std::string& runDir, const CheckpointHeader& header, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer, int keep);

// Reads only the header (model name, optimizer, position). Throws UsageError if unreadable.
CheckpointHeader readCheckpointHeader(const std::string& path);
// Restores model and optimizer state; the caller has checked the header matches.
void loadCheckpointState(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer);

// A checkpoint file as given, or the newest one in RUN_DIR/checkpoints when given a run directory.
// Throws UsageError when there is none.
std::string resolveCheckpoint(const std::string& fileOrRunDir);
std::vector<std::string> listCheckpoints(const std::string& runDir);

// RUN_DIR/model.pt: a dict name -> tensor that Python's torch.load reads (torch::pickle_save).
void writeModelWeights(const std::string& path, torch::nn::Module& model);

// Writes bytes to path through a temp file in the same folder, fsync and rename.
void writeFileAtomically(const std::string& path, const std::string& bytes);

} // namespace ringmaster::trainer
