#pragma once
// Trainer hyperparameters: from a JSON job file (--job) and/or command-line flags (flags win). Each option's key,
// type, default, range or choices and help are declared once, in core/protocol/trainer_options.h; this struct is
// where the trainer keeps the values, bound to those rows by key in config.cpp (its comments say what the values
// mean, not what they default to).

#include <cstdint>
#include <string>
#include <vector>

namespace ringmaster::trainer {

struct TrainerConfig
{
    // Every option at its default, from the one table (core/protocol/trainer_options.h).
    TrainerConfig();

    std::string model;              // a built-in model's name or a TorchScript file
    std::string data;               // a built-in set, a folder or a file (data/training_data.h)
    std::string valData;            // validation data; "" none
    double valSplit{};              // fraction of --data held out for validation (seeded)
    std::string labelColumn;        // CSV label column; "" the last
    std::string imageSize;          // H,W: resize images; "" keep
    std::string loss;
    std::string normalize;
    std::string dataCache;          // per-machine decoded-data cache folder; "" the default, "off" none
    int epochs{};
    std::int64_t maxSteps{};        // 0: no limit besides epochs
    std::int64_t batchSize{};       // per rank
    double lr{};
    std::string optimizer;
    double momentum{};
    double weightDecay{};
    std::string lrSchedule;
    std::int64_t warmupSteps{};
    std::int64_t lrStepSize{};      // step schedule: steps per decay (0: one epoch)
    double lrGamma{};               // step schedule: decay factor
    std::uint64_t seed{};
    std::string device;
    std::string backend;            // empty: nccl on cuda, gloo on cpu
    int threads{};                  // intra-op threads per rank; 0: cores / local world size
    std::int64_t checkpointEvery{}; // steps; 0: at the end of each epoch only
    int keepCheckpoints{};
    std::string keepBest;           // METRIC[:min|max], none or auto (best_checkpoint.h)
    std::string resume;             // checkpoint file or run directory
    std::string out;                // run directory
    int evalEvery{};                // epochs; 0: only at the end
    std::int64_t evalBatchSize{};   // 1000 took 1.15x as long as 256 and 1.45x the peak memory (cnn, docs/performance.md)
    double bucketMb{};              // gradient bucket size, as DDP's bucket_cap_mb
    std::string localAllreduce;     // same-host CPU gradients: shared memory or Gloo
    bool findUnusedParameters{};    // as DDP's: zero gradients for parameters a step left unused
    bool dropLast{};                // sampler: drop the tail instead of padding
    int logEvery{};                 // stdout metric line every N steps (metrics.csv gets every step)
    double rendezvousTimeoutSec{};
    double collectiveTimeoutSec{};
    std::int64_t syntheticSamples{}; // size of the synthetic regression set
    std::string dataPlacement;      // where the compact data lives on a GPU run
    bool deterministic{};           // deterministic kernels only (cuDNN, cuBLAS, ATen); see device_setup.h
    std::string precision;          // autocast's type for forward and loss (mixed_precision.h)
    double lossScale{};             // fp16: the loss scaler's first scale (GradScaler's init_scale)
    std::int64_t lossScaleGrowthInterval{}; // fp16: finite steps in a row before the scale doubles
    bool tf32{};                    // cuda: TF32 matrix products and convolutions (PyTorch's default: off)
    bool cudnnBenchmark{};          // cuda: cuDNN times its kernels once per shape (off with --deterministic)
    bool forceCollectives{};        // process group and all-reduces even with one rank (backend checks)

    // What this run is asked to do besides training (flags without a job key, not options).
    bool validateOnly = false;      // check flags, job file, data, model and checkpoint, then exit
    bool probe = false;             // --validate-only that prints one JSON line describing data and model
};

// Parses argv (argv[0] is the program). Throws UsageError with a one-line message naming the flag.
// Returns false when --help was asked for (the usage text was printed).
bool parseTrainerArgs(int argc, char** argv, TrainerConfig& config);

// Applies the keys of a JSON job file: top-level keys or a "trainer" object, named like the flags
// with '-' or '_' ("batch_size" or "batch-size"). Unknown keys are an error.
void applyJobFile(const std::string& path, TrainerConfig& config);

// One of the built-in models (the model option's named values); any other --model is a TorchScript file
// (models/scripted_model.h).
bool isBuiltinModel(const std::string& model);

// Checks ranges and names; throws UsageError.
void validateConfig(const TrainerConfig& config);

std::string trainerUsage();

} // namespace ringmaster::trainer
