#pragma once
// Trainer hyperparameters: from a JSON job file (--job) and/or command-line flags (flags win).

#include <cstdint>
#include <string>
#include <vector>

namespace ringmaster::trainer {

struct TrainerConfig
{
    std::string model = "cnn";              // linear | mlp | cnn | a TorchScript file
    std::string data = "fashion-mnist";     // fashion-mnist | synthetic | IDX or image folder | .csv | tensor file
    std::string valData;                    // validation data (same kinds); "" none
    double valSplit = 0.0;                  // fraction of --data held out for validation (seeded)
    std::string labelColumn;                // CSV label column; "" the last
    std::string imageSize;                  // H,W: resize images; "" keep
    std::string loss = "auto";              // auto | cross_entropy | mse | bce
    std::string normalize = "auto";         // auto | none | MEAN,STD | M1..MC,S1..SC
    std::string dataCache;                  // per-machine decoded-data cache folder; "" default, "off" none
    int epochs = 1;
    std::int64_t maxSteps = 0;              // 0: no limit besides epochs
    std::int64_t batchSize = 64;            // per rank
    double lr = 0.01;
    std::string optimizer = "sgd";          // sgd | adam | adamw
    double momentum = 0.9;
    double weightDecay = 0.0;
    std::string lrSchedule = "constant";    // constant | step | cosine
    std::int64_t warmupSteps = 0;
    std::int64_t lrStepSize = 0;            // step schedule: steps per decay (0: one epoch)
    double lrGamma = 0.1;                   // step schedule: decay factor
    std::uint64_t seed = 42;
    std::string device = "cpu";             // cpu | cuda
    std::string backend;                    // gloo | nccl; empty: nccl on cuda, gloo on cpu
    int threads = 0;                        // intra-op threads per rank; 0: cores / local world size
    std::int64_t checkpointEvery = 0;       // steps; 0: at the end of each epoch only
    int keepCheckpoints = 3;
    std::string keepBest = "auto";          // METRIC[:min|max] | none | auto: val_loss:min with validation (best_checkpoint.h)
    std::string resume;                     // checkpoint file or run directory
    std::string out = "runs/trainer";       // run directory
    int evalEvery = 1;                      // epochs; 0: only at the end
    std::int64_t evalBatchSize = 256;       // 1000 took 1.15x as long and 1.45x the peak memory (cnn, docs/performance.md)
    double bucketMb = 25.0;                 // gradient bucket size, as DDP's bucket_cap_mb
    std::string localAllreduce = "shm";     // same-host CPU gradients: shm (shared memory) | gloo
    bool findUnusedParameters = false;      // as DDP's: zero gradients for parameters a step left unused
    bool dropLast = false;                  // sampler: drop the tail instead of padding
    int logEvery = 10;                      // stdout metric line every N steps (metrics.csv gets every step)
    double rendezvousTimeoutSec = 300.0;
    double collectiveTimeoutSec = 300.0;
    std::int64_t syntheticSamples = 4096;   // size of the synthetic regression set
    bool validateOnly = false;              // check flags, job file, data, model and checkpoint, then exit
    bool probe = false;                     // --validate-only that prints one JSON line describing data and model
    std::string dataPlacement = "auto";     // auto | device | host: where the compact data lives on a GPU run
    bool deterministic = false;             // deterministic kernels only (cuDNN, cuBLAS, ATen); see device_setup.h
    std::string precision = "fp32";         // fp32 | bf16 | fp16: autocast's type for forward and loss (mixed_precision.h)
    double lossScale = 65536.0;             // fp16: the loss scaler's first scale (GradScaler's init_scale)
    std::int64_t lossScaleGrowthInterval = 2000; // fp16: finite steps in a row before the scale doubles
    bool tf32 = true;                       // cuda: TF32 matrix products and convolutions (PyTorch's default: off)
    bool cudnnBenchmark = true;             // cuda: cuDNN times its kernels once per shape (off with --deterministic)
    bool forceCollectives = false;          // process group and all-reduces even with one rank (backend checks)
};

// Parses argv (argv[0] is the program). Throws UsageError with a one-line message naming the flag.
// Returns false when --help was asked for (the usage text was printed).
bool parseTrainerArgs(int argc, char** argv, TrainerConfig& config);

// Applies the keys of a JSON job file: top-level keys or a "trainer" object, named like the flags
// with '-' or '_' ("batch_size" or "batch-size"). Unknown keys are an error.
void applyJobFile(const std::string& path, TrainerConfig& config);

// linear, mlp or cnn; any other --model is a TorchScript file (models/scripted_model.h).
bool isBuiltinModel(const std::string& model);

// Checks ranges and names; throws UsageError.
void validateConfig(const TrainerConfig& config);

std::string trainerUsage();

} // namespace ringmaster::trainer
