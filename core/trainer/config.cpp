#include "config.h"

#include "best_checkpoint.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>
#include <torch/version.h>

#include "data/training_data.h"
#include "errors.h"
#include "version_info.h"

namespace ringmaster::trainer {
namespace {

using Setter = std::function<void(TrainerConfig&, const std::string& flag, const std::string& value)>;

double toDouble(const std::string& flag, const std::string& value)
{
    char* end = nullptr;
    const double result = std::strtod(value.c_str(), &end);
    if (end == value.c_str() || *end != '\0' || !std::isfinite(result)) {
        throw UsageError("--" + flag + ": '" + value + "' is not a number");
    }
    return result;
}

std::int64_t toInt(const std::string& flag, const std::string& value)
{
    char* end = nullptr;
    errno = 0;
    const long long result = std::strtoll(value.c_str(), &end, 10);
    if (errno != 0 || end == value.c_str() || *end != '\0') {
        throw UsageError("--" + flag + ": '" + value + "' is not an integer");
    }
    return result;
}

bool toBool(const std::string& flag, const std::string& value)
{
    if (value == "1" || value == "true" || value == "yes") return true;
    if (value == "0" || value == "false" || value == "no") return false;
    throw UsageError("--" + flag + ": '" + value + "' is not a boolean (true or false)");
}

template <typename Field>
Setter intField(Field TrainerConfig::*field)
{
    return [field](TrainerConfig& c, const std::string& f, const std::string& v) {
        const std::int64_t value = toInt(f, v);
        // An int flag given 4294967297 must not wrap to 1 (--epochs) or to a negative (--threads).
        if (value < std::numeric_limits<Field>::min() || value > std::numeric_limits<Field>::max()) {
            throw UsageError("--" + f + ": " + v + " is out of range (at most " +
                             std::to_string(std::numeric_limits<Field>::max()) + ")");
        }
        c.*field = static_cast<Field>(value);
    };
}

Setter doubleField(double TrainerConfig::*field)
{
    return [field](TrainerConfig& c, const std::string& f, const std::string& v) { c.*field = toDouble(f, v); };
}

Setter stringField(std::string TrainerConfig::*field)
{
    return [field](TrainerConfig& c, const std::string&, const std::string& v) { c.*field = v; };
}

const std::map<std::string, Setter>& setters()
{
    static const std::map<std::string, Setter> table = {
        {"model", stringField(&TrainerConfig::model)},
        {"data", stringField(&TrainerConfig::data)},
        {"val-data", stringField(&TrainerConfig::valData)},
        {"val-split", doubleField(&TrainerConfig::valSplit)},
        {"label-column", stringField(&TrainerConfig::labelColumn)},
        {"image-size", stringField(&TrainerConfig::imageSize)},
        {"loss", stringField(&TrainerConfig::loss)},
        {"normalize", stringField(&TrainerConfig::normalize)},
        {"data-cache", stringField(&TrainerConfig::dataCache)},
        {"epochs", intField(&TrainerConfig::epochs)},
        {"max-steps", intField(&TrainerConfig::maxSteps)},
        {"batch-size", intField(&TrainerConfig::batchSize)},
        {"lr", doubleField(&TrainerConfig::lr)},
        {"optimizer", stringField(&TrainerConfig::optimizer)},
        {"momentum", doubleField(&TrainerConfig::momentum)},
        {"weight-decay", doubleField(&TrainerConfig::weightDecay)},
        {"lr-schedule", stringField(&TrainerConfig::lrSchedule)},
        {"warmup-steps", intField(&TrainerConfig::warmupSteps)},
        {"lr-step-size", intField(&TrainerConfig::lrStepSize)},
        {"lr-gamma", doubleField(&TrainerConfig::lrGamma)},
        {"seed", [](TrainerConfig& c, const std::string& f, const std::string& v) {
             const auto seed = toInt(f, v);
             if (seed < 0) throw UsageError("--seed: must be >= 0, got " + v);
             c.seed = static_cast<std::uint64_t>(seed);
         }},
        {"device", stringField(&TrainerConfig::device)},
        {"backend", stringField(&TrainerConfig::backend)},
        {"threads", intField(&TrainerConfig::threads)},
        {"checkpoint-every", intField(&TrainerConfig::checkpointEvery)},
        {"keep-checkpoints", intField(&TrainerConfig::keepCheckpoints)},
        {"keep-best", stringField(&TrainerConfig::keepBest)},
        {"resume", stringField(&TrainerConfig::resume)},
        {"out", stringField(&TrainerConfig::out)},
        {"eval-every", intField(&TrainerConfig::evalEvery)},
        {"eval-batch-size", intField(&TrainerConfig::evalBatchSize)},
        {"bucket-mb", doubleField(&TrainerConfig::bucketMb)},
        {"local-allreduce", stringField(&TrainerConfig::localAllreduce)},
        {"find-unused-parameters", [](TrainerConfig& c, const std::string& f, const std::string& v) {
             c.findUnusedParameters = toBool(f, v);
         }},
        {"drop-last", [](TrainerConfig& c, const std::string& f, const std::string& v) { c.dropLast = toBool(f, v); }},
        {"log-every", intField(&TrainerConfig::logEvery)},
        {"data-placement", stringField(&TrainerConfig::dataPlacement)},
        {"deterministic", [](TrainerConfig& c, const std::string& f, const std::string& v) { c.deterministic = toBool(f, v); }},
        {"precision", stringField(&TrainerConfig::precision)},
        {"loss-scale", doubleField(&TrainerConfig::lossScale)},
        {"loss-scale-growth-interval", intField(&TrainerConfig::lossScaleGrowthInterval)},
        {"tf32", [](TrainerConfig& c, const std::string& f, const std::string& v) { c.tf32 = toBool(f, v); }},
        {"cudnn-benchmark", [](TrainerConfig& c, const std::string& f, const std::string& v) { c.cudnnBenchmark = toBool(f, v); }},
        {"force-collectives", [](TrainerConfig& c, const std::string& f, const std::string& v) { c.forceCollectives = toBool(f, v); }},
        {"rendezvous-timeout", doubleField(&TrainerConfig::rendezvousTimeoutSec)},
        {"collective-timeout", doubleField(&TrainerConfig::collectiveTimeoutSec)},
        {"synthetic-samples", intField(&TrainerConfig::syntheticSamples)},
    };
    return table;
}

std::string normaliseKey(std::string key)
{
    for (auto& ch : key) {
        if (ch == '_') ch = '-';
    }
    return key;
}

void applyValue(TrainerConfig& config, const std::string& key, const std::string& value)
{
    const auto& table = setters();
    const auto it = table.find(key);
    if (it == table.end()) {
        throw UsageError("unknown option '--" + key + "' (run ringmaster-trainer --help for the list)");
    }
    it->second(config, key, value);
}

void requireOneOf(const std::string& flag, const std::string& value, std::initializer_list<const char*> allowed)
{
    std::string list;
    for (const char* option : allowed) {
        if (value == option) return;
        list += list.empty() ? option : std::string("|") + option;
    }
    throw UsageError("--" + flag + ": unknown value '" + value + "' (valid: " + list + ")");
}

} // namespace

std::string trainerUsage()
{
    return "usage: ringmaster-trainer [--job FILE] [--FLAG VALUE]...\n"
           "One data-parallel rank; reads RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,\n"
           "MASTER_PORT from the environment, else Slurm's: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, this\n"
           "node's SLURM_STEP_TASKS_PER_NODE entry; MASTER_ADDR = first host of SLURM_STEP_NODELIST (or\n"
           "SLURM_JOB_NODELIST), MASTER_PORT = 15000 + SLURM_JOB_ID % 17000. So `srun -n 4 ringmaster-trainer`\n"
           "works as is; a MASTER_ADDR or MASTER_PORT you set wins.\n"
           "flags: --model linear|mlp|cnn|FILE.pt (TorchScript)  --epochs N  --max-steps N\n"
           "       --data fashion-mnist|synthetic|IDX_DIR|IMAGE_DIR|FILE.csv|FILE.pt   training data (format detected)\n"
           "       --val-data PATH   validation data   --val-split F   hold out a seeded fraction of --data instead\n"
           "       --label-column NAME (CSV; default the last)  --image-size H,W (resize images)\n"
           "       --loss auto|cross_entropy|mse|bce (auto: class labels -> cross_entropy, float targets -> mse)\n"
           "       --normalize auto|none|MEAN,STD|M1,..,MC,S1,..,SC (auto: images standardised per channel)\n"
           "       --data-cache DIR|off   decoded data shared by the ranks of this machine (default\n"
           "                              $RINGMASTER_DATA_CACHE, else $XDG_CACHE_HOME/ringmaster/data or ~/.cache/ringmaster/data)\n"
           "       --batch-size N (per rank)  --lr X  --optimizer sgd|adam|adamw  --momentum X\n"
           "       --weight-decay X  --lr-schedule constant|step|cosine  --warmup-steps N  --lr-step-size N\n"
           "       --lr-gamma X  --seed N  --device cpu|cuda  --backend gloo|nccl  --threads N\n"
           "       --checkpoint-every N  --keep-checkpoints N  --resume CHECKPOINT|RUN_DIR  --out RUN_DIR\n"
           "       --keep-best val_loss|val_accuracy[:min|max]|none|auto   checkpoint each new best evaluation, never\n"
           "                                  rotated away, as checkpoints/best.pt (auto: val_loss:min with validation)\n"
           "       --eval-every N  --eval-batch-size N  --bucket-mb X  --drop-last true|false  --log-every N\n"
           "       --local-allreduce shm|gloo   how same-host CPU ranks all-reduce gradients (default shm)\n"
           "       --find-unused-parameters true|false   average parameters a step left without a gradient\n"
           "                                  as zeros, as PyTorch DDP (default false: such a step is an error)\n"
           "       --rendezvous-timeout SEC  --collective-timeout SEC  --synthetic-samples N\n"
           "       --data-placement auto|device|host   on a GPU, where the compact data lives (auto: on the GPU\n"
           "                                  when it takes at most a quarter of its free memory); ignored on cpu\n"
           "       --deterministic true|false   deterministic kernels only (cuDNN without benchmarking, cuBLAS's\n"
           "                                  fixed workspace; an operation without one is an error); default false\n"
           "       --precision fp32|bf16|fp16   autocast's type for the forward pass and the loss, as torch.autocast\n"
           "                                  (weights, gradients and the optimizer stay fp32; default fp32); fp16\n"
           "                                  scales the loss as torch.amp.GradScaler: a step with inf/NaN gradients\n"
           "                                  is skipped and the scale halved, 2000 finite steps in a row double it\n"
           "       --loss-scale X  --loss-scale-growth-interval N   fp16: first scale (65536), steps to growth (2000)\n"
           "       --tf32 true|false   on cuda: TF32 matrix products and convolutions (default true)\n"
           "       --cudnn-benchmark true|false   on cuda: cuDNN picks the fastest kernel per shape (default true;\n"
           "                                  off with --deterministic true)\n"
           "       --force-collectives true   run the process group and all-reduces even with one rank\n"
           "                                  (checks a backend, e.g. NCCL, on a one-GPU machine)\n"
           "       --validate-only   check the flags, job file, dataset headers and that --batch-size fits a\n"
           "                         rank's shard (world size from WORLD_SIZE, else SLURM_NTASKS, else 1); print 'ok', exit 0 (or 2)\n"
           "       --probe           as --validate-only, but read the data, run the model on one batch and print one\n"
           "                         JSON line: format, samples, classes, input shape, parameters, output shape, loss\n"
           "       --help            this text\n"
           "       --version         the Ringmaster and LibTorch versions, and whether CUDA and NCCL are compiled in\n"
           "\n"
           "Exit status:\n"
           "  " + std::to_string(protocol::kTrainerExitOk) + "  completed, or stopped on request (SIGTERM: a final checkpoint)\n"
           "  " + std::to_string(protocol::kTrainerExitFailure) + "  failed (a collective, an I/O error, a crash caught): restarting may help\n"
           "  " + std::to_string(protocol::kTrainerExitUsage) + "  bad input (a flag, the job file, the environment, a data or model file): restarting cannot help\n"
           "  " + std::to_string(protocol::kTrainerExitAddressInUse) + "  the rendezvous address was in use (MASTER_PORT taken): relaunch on another port\n";
}

bool parseTrainerArgs(int argc, char** argv, TrainerConfig& config)
{
    // The job file is applied first wherever it appears, so flags always override it.
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            std::cout << trainerUsage();
            return false;
        }
        if (arg == "--version") {
            std::cout << trainerVersionText();
            return false;
        }
        if (arg == "--job") {
            if (i + 1 >= argc) throw UsageError("--job needs a file name");
            applyJobFile(argv[i + 1], config);
        }
    }
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0) {
            throw UsageError("unexpected argument '" + arg + "' (flags look like --name VALUE)");
        }
        arg = arg.substr(2);
        std::string value;
        if (arg == "validate-only") {
            config.validateOnly = true;
            continue;
        }
        if (arg == "probe") {
            config.validateOnly = config.probe = true;
            continue;
        }
        if (const auto eq = arg.find('='); eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        } else {
            if (i + 1 >= argc) throw UsageError("--" + arg + " needs a value");
            value = argv[++i];
        }
        if (arg == "job") continue;
        if (arg == "validate-only") {
            config.validateOnly = value.empty() || value == "true" || value == "1";
            continue;
        }
        applyValue(config, arg, value);
    }
    validateConfig(config);
    return true;
}

void applyJobFile(const std::string& path, TrainerConfig& config)
{
    std::ifstream in(path);
    if (!in) {
        throw UsageError("job file '" + path + "' cannot be read: check the path and its permissions");
    }
    nlohmann::json doc;
    try {
        // Parsed whole (strict): text after the object is an error, as it is for the launcher's reader.
        doc = nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
    } catch (const nlohmann::json::exception& e) {
        throw UsageError("job file '" + path + "' is not valid JSON: " + e.what());
    }
    if (!doc.is_object()) {
        throw UsageError("job file '" + path + "' must hold a JSON object");
    }
    if (doc.contains("trainer") && !doc["trainer"].is_object()) {
        throw UsageError("job file '" + path + "': \"trainer\" must be an object of trainer flags, e.g. {\"epochs\": 3}");
    }
    const nlohmann::json& section = doc.contains("trainer") ? doc["trainer"] : doc;
    for (const auto& [key, value] : section.items()) {
        if (&section == &doc && (key == "version" || key == "launch")) continue;
        std::string text;
        if (value.is_string()) {
            text = value.get<std::string>();
        } else if (value.is_number() || value.is_boolean()) {
            text = value.dump();
        } else {
            throw UsageError("job file '" + path + "': key '" + key + "' must be a string, number or boolean");
        }
        try {
            applyValue(config, normaliseKey(key), text);
        } catch (const UsageError& e) {
            throw UsageError("job file '" + path + "': " + e.what());
        }
    }
}

bool isBuiltinModel(const std::string& model)
{
    return model == "linear" || model == "mlp" || model == "cnn";
}

void validateConfig(const TrainerConfig& c)
{
    std::error_code notAFile; // a name the system refuses (too long, a loop) is no file either, not an exception
    if (!isBuiltinModel(c.model) && !std::filesystem::is_regular_file(c.model, notAFile)) {
        throw UsageError("--model: '" + c.model + "' is neither a built-in model (linear|mlp|cnn) nor an existing "
                         "TorchScript file (save one in Python with torch.jit.save(torch.jit.script(model), PATH))");
    }
    requireOneOf("optimizer", c.optimizer, {"sgd", "adam", "adamw"});
    requireOneOf("lr-schedule", c.lrSchedule, {"constant", "step", "cosine"});
    requireOneOf("device", c.device, {"cpu", "cuda"});
    requireOneOf("data-placement", c.dataPlacement, {"auto", "device", "host"});
    if (!c.backend.empty()) requireOneOf("backend", c.backend, {"gloo", "nccl"});
    requireOneOf("local-allreduce", c.localAllreduce, {"shm", "gloo"});
    if (c.epochs < 1) throw UsageError("--epochs: must be >= 1, got " + std::to_string(c.epochs));
    if (c.maxSteps < 0) throw UsageError("--max-steps: must be >= 0 (0 = no limit), got " + std::to_string(c.maxSteps));
    if (c.batchSize < 1) throw UsageError("--batch-size: must be >= 1 (per rank), got " + std::to_string(c.batchSize));
    if (!(c.lr > 0.0)) throw UsageError("--lr: must be > 0, got " + std::to_string(c.lr));
    if (c.momentum < 0.0 || c.momentum >= 1.0) throw UsageError("--momentum: must be in [0, 1), got " + std::to_string(c.momentum));
    if (c.weightDecay < 0.0) throw UsageError("--weight-decay: must be >= 0, got " + std::to_string(c.weightDecay));
    if (c.warmupSteps < 0) throw UsageError("--warmup-steps: must be >= 0");
    if (c.lrStepSize < 0) throw UsageError("--lr-step-size: must be >= 0 (0 = one epoch)");
    if (!(c.lrGamma > 0.0 && c.lrGamma <= 1.0)) throw UsageError("--lr-gamma: must be in (0, 1]");
    if (c.threads < 0) throw UsageError("--threads: must be >= 0 (0 = cores / local world size)");
    if (c.checkpointEvery < 0) throw UsageError("--checkpoint-every: must be >= 0 (0 = at each epoch end)");
    if (c.keepCheckpoints < 1) throw UsageError("--keep-checkpoints: must be >= 1");
    parseKeepBest(c.keepBest, true); // its form; whether "auto" keeps one depends on the data
    if (c.evalEvery < 0) throw UsageError("--eval-every: must be >= 0 (0 = only at the end)");
    if (c.evalBatchSize < 1) throw UsageError("--eval-batch-size: must be >= 1");
    if (!(c.bucketMb > 0.0)) throw UsageError("--bucket-mb: must be > 0");
    if (c.logEvery < 1) throw UsageError("--log-every: must be >= 1");
    if (!(c.rendezvousTimeoutSec > 0.0)) throw UsageError("--rendezvous-timeout: must be > 0 seconds");
    if (!(c.collectiveTimeoutSec > 0.0)) throw UsageError("--collective-timeout: must be > 0 seconds");
    if (c.syntheticSamples < 1) throw UsageError("--synthetic-samples: must be >= 1");
    if (c.out.empty()) throw UsageError("--out: needs a run directory");
    if (!(c.valSplit >= 0.0 && c.valSplit < 1.0)) {
        throw UsageError("--val-split: must be in [0, 1) (a fraction of --data), got " + std::to_string(c.valSplit));
    }
    if (c.valSplit > 0.0 && !c.valData.empty()) {
        throw UsageError("--val-split and --val-data both give a validation set: use one of them");
    }
    requireOneOf("loss", c.loss, {"auto", "cross_entropy", "mse", "bce"});
    parseImageSize(c.imageSize);
    requireOneOf("precision", c.precision, {"fp32", "bf16", "fp16"});
#if TORCH_VERSION_MAJOR < 2
    if (c.precision == "fp16" && c.device == "cpu") {
        throw UsageError("--precision fp16 on the CPU needs a trainer built against PyTorch 2.x (its CPU autocast has "
                         "fp16; LibTorch " TORCH_VERSION " has not): use --precision bf16 on the CPU, or build one with "
                         "scripts/build-trainer.sh");
    }
#endif
    if (!(c.lossScale > 0.0)) throw UsageError("--loss-scale: must be > 0 (the fp16 loss scaler's first scale, e.g. 65536)");
    if (c.lossScaleGrowthInterval < 1) throw UsageError("--loss-scale-growth-interval: must be >= 1");
    if (c.backend == "nccl" && c.device != "cuda") {
        throw UsageError("--backend nccl needs --device cuda (NCCL only runs on GPUs); use --backend gloo on cpu");
    }
}

} // namespace ringmaster::trainer
