#pragma once
// Checkpoints hold the model, the optimizer state and the loop position together, written atomically
// (atomic_file.h: temp file, checked fsync and rename): a crash or a full disk mid-write never damages
// the previous checkpoint and leaves no temp file. A run directory holds one timeline: resuming from an
// older checkpoint moves the later ones aside (abandonCheckpointsAfter). They also hold the CPU random
// generator and, written on a GPU, the rank's CUDA generator, so dropout draws the same masks after a resume,
// and the --precision with fp16's loss-scaler state, so the scale goes on where it was.

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "trainer/mixed_precision.h"

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
    std::string precision = "fp32"; // older checkpoints (before --precision) are fp32
    LossScalerState lossScaler;     // fp16's loss scaler; scale 0 when the run had none
};

inline constexpr const char* kAbandonedPrefix = "abandoned-";

// Writes RUN_DIR/checkpoints/step-NNNNNNNN.pt and removes all but the newest `keep` and the checkpoint of step
// `keepAlso` (the best one, best_checkpoint.h; -1: none: pruneCheckpoints); `device` is the rank's (its CUDA generator is kept).
// Returns the path written. Throws IoError (path and reason) when it cannot be written; the older
// checkpoints are then untouched. RUN_DIR must exist: a run directory deleted mid-run is an IoError
// naming RUN_DIR/checkpoints, never recreated.
std::string saveCheckpoint(const std::string& runDir, const CheckpointHeader& header, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer, const torch::Device& device, int keep,
                           std::int64_t keepAlso = -1);

// Removes RUN_DIR's checkpoints but the newest `keep` and the one of step `keepAlso` (-1: none).
void pruneCheckpoints(const std::string& runDir, int keep, std::int64_t keepAlso);

// Reads only the header (model name, optimizer, position). Throws UsageError if unreadable.
CheckpointHeader readCheckpointHeader(const std::string& path);
// Restores model and optimizer state onto `device` (this rank's); the caller has checked the header matches.
void loadCheckpointState(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                         const torch::Device& device);

// Checks a checkpoint's bytes before anything trusts them: every record of the zip archive is read and
// its CRC-32 compared (LibTorch's reader does not check them, so a flipped byte would load silently),
// then the header is read. Throws UsageError naming the file and the damage.
void verifyCheckpoint(const std::string& path);

// A checkpoint file as given, or the newest intact one in RUN_DIR/checkpoints when given a run
// directory: a damaged newer one is skipped and described in `skipped` ("PATH: reason"), so a crash
// that corrupted the last checkpoint costs one checkpoint interval, not the run. Throws UsageError
// when the given file is damaged or the run directory holds no intact checkpoint.
std::string resolveCheckpoint(const std::string& fileOrRunDir, std::vector<std::string>* skipped = nullptr);
std::vector<std::string> listCheckpoints(const std::string& runDir);

// Resuming from `step` when RUN_DIR has later checkpoints starts a new timeline: the later ones move to
// RUN_DIR/checkpoints/abandoned-<UTC time>/, so pruning by name cannot delete the new timeline's
// checkpoints first and a later --resume RUN_DIR cannot pick the abandoned timeline. Returns that
// folder, or "" when no checkpoint is later than `step`.
// True when `checkpoint` is one of RUN_DIR/checkpoints/step-*.pt (not an abandoned one, not elsewhere).
bool isInCheckpointFolder(const std::string& runDir, const std::string& checkpoint);
std::string abandonCheckpointsAfter(const std::string& runDir, std::int64_t step);

// RUN_DIR/model.pt: a dict name -> tensor that Python's torch.load reads, also with weights_only=True
// (the default since PyTorch 2.6). Throws IoError when it cannot be written.
void writeModelWeights(const std::string& path, torch::nn::Module& model);
// torch.save's zip format of `value`, with dicts and lists as plain Python ones (no TorchScript type tags).
std::string plainPickleArchive(const c10::IValue& value);

} // namespace ringmaster::trainer
