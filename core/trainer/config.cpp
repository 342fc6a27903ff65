#include "trainer/config.h"

#include "trainer/best_checkpoint.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include <torch/version.h>

#include "trainer/data/training_data.h"
#include "trainer/errors.h"
#include "protocol/trainer_options.h"
#include "trainer/version_info.h"

namespace ringmaster::trainer {
namespace {

using Setter = std::function<void(TrainerConfig&, const std::string& flag, const std::string& value)>;

// The value's text was checked against its row (type, bounds, choices) before a setter sees it.
double toDouble(const std::string& value) { return std::strtod(value.c_str(), nullptr); }
std::int64_t toInt(const std::string& value) { return std::strtoll(value.c_str(), nullptr, 10); }
bool toBool(const std::string& value)
{
    bool result = false;
    protocol::parseOptionBoolean(value, &result);
    return result;
}

template <typename Field>
Setter intField(Field TrainerConfig::*field)
{
    return [field](TrainerConfig& c, const std::string& f, const std::string& v) {
        const std::int64_t value = toInt(v);
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
    return [field](TrainerConfig& c, const std::string&, const std::string& v) { c.*field = toDouble(v); };
}

Setter stringField(std::string TrainerConfig::*field)
{
    return [field](TrainerConfig& c, const std::string&, const std::string& v) { c.*field = v; };
}

Setter boolField(bool TrainerConfig::*field)
{
    return [field](TrainerConfig& c, const std::string&, const std::string& v) { c.*field = toBool(v); };
}

// Where each row of the option table (trainer_options.h) lands in TrainerConfig; the keys are the table's.
const std::map<std::string, Setter>& setters()
{
    static const std::map<std::string, Setter> table = [] {
        std::map<std::string, Setter> bound = {
            {"model", stringField(&TrainerConfig::model)},
            {"data", stringField(&TrainerConfig::data)},
            {"val_data", stringField(&TrainerConfig::valData)},
            {"val_split", doubleField(&TrainerConfig::valSplit)},
            {"label_column", stringField(&TrainerConfig::labelColumn)},
            {"image_size", stringField(&TrainerConfig::imageSize)},
            {"loss", stringField(&TrainerConfig::loss)},
            {"normalize", stringField(&TrainerConfig::normalize)},
            {"data_cache", stringField(&TrainerConfig::dataCache)},
            {"epochs", intField(&TrainerConfig::epochs)},
            {"max_steps", intField(&TrainerConfig::maxSteps)},
            {"batch_size", intField(&TrainerConfig::batchSize)},
            {"lr", doubleField(&TrainerConfig::lr)},
            {"optimizer", stringField(&TrainerConfig::optimizer)},
            {"momentum", doubleField(&TrainerConfig::momentum)},
            {"weight_decay", doubleField(&TrainerConfig::weightDecay)},
            {"lr_schedule", stringField(&TrainerConfig::lrSchedule)},
            {"warmup_steps", intField(&TrainerConfig::warmupSteps)},
            {"lr_step_size", intField(&TrainerConfig::lrStepSize)},
            {"lr_gamma", doubleField(&TrainerConfig::lrGamma)},
            {"seed", [](TrainerConfig& c, const std::string&, const std::string& v) {
                 c.seed = static_cast<std::uint64_t>(toInt(v)); // the table's bound: >= 0
             }},
            {"device", stringField(&TrainerConfig::device)},
            {"backend", stringField(&TrainerConfig::backend)},
            {"threads", intField(&TrainerConfig::threads)},
            {"checkpoint_every", intField(&TrainerConfig::checkpointEvery)},
            {"keep_checkpoints", intField(&TrainerConfig::keepCheckpoints)},
            {"keep_best", stringField(&TrainerConfig::keepBest)},
            {"resume", stringField(&TrainerConfig::resume)},
            {"out", stringField(&TrainerConfig::out)},
            {"eval_every", intField(&TrainerConfig::evalEvery)},
            {"eval_batch_size", intField(&TrainerConfig::evalBatchSize)},
            {"bucket_mb", doubleField(&TrainerConfig::bucketMb)},
            {"local_allreduce", stringField(&TrainerConfig::localAllreduce)},
            {"find_unused_parameters", boolField(&TrainerConfig::findUnusedParameters)},
            {"drop_last", boolField(&TrainerConfig::dropLast)},
            {"log_every", intField(&TrainerConfig::logEvery)},
            {"data_placement", stringField(&TrainerConfig::dataPlacement)},
            {"deterministic", boolField(&TrainerConfig::deterministic)},
            {"precision", stringField(&TrainerConfig::precision)},
            {"loss_scale", doubleField(&TrainerConfig::lossScale)},
            {"loss_scale_growth_interval", intField(&TrainerConfig::lossScaleGrowthInterval)},
            {"tf32", boolField(&TrainerConfig::tf32)},
            {"cudnn_benchmark", boolField(&TrainerConfig::cudnnBenchmark)},
            {"force_collectives", boolField(&TrainerConfig::forceCollectives)},
            {"rendezvous_timeout", doubleField(&TrainerConfig::rendezvousTimeoutSec)},
            {"collective_timeout", doubleField(&TrainerConfig::collectiveTimeoutSec)},
            {"synthetic_samples", intField(&TrainerConfig::syntheticSamples)},
        };
        // The table and the bindings name the same options: a row without a field (or a field without a row)
        // is a programming error, caught by the first run of any test.
        std::size_t rows = 0;
        for (const protocol::TrainerOption& option : protocol::trainerOptions()) {
            ++rows;
            if (!bound.count(option.key)) throw std::logic_error(std::string("trainer option '") + option.key + "' has no field");
        }
        if (rows != bound.size()) throw std::logic_error("a TrainerConfig field has no row in trainer_options.h");
        return bound;
    }();
    return table;
}

// KEY (a flag's name or a job file's key, '-' or '_') set to VALUE's text, checked against its row first.
void applyValue(TrainerConfig& config, const std::string& key, const std::string& value)
{
    const protocol::TrainerOption* option = protocol::findTrainerOption(key);
    if (!option) throw UsageError("unknown option '--" + key + "' (run ringmaster-trainer --help for the list)");
    const std::string flag = protocol::optionFlagNameOf(key);
    if (const std::string problem = protocol::optionValueProblem(*option, value); !problem.empty()) {
        throw UsageError("--" + flag + ": " + problem);
    }
    setters().at(option->key)(config, flag, value);
}

} // namespace

TrainerConfig::TrainerConfig()
{
    for (const protocol::TrainerOption& option : protocol::trainerOptions()) {
        setters().at(option.key)(*this, option.key, option.defaultValue);
    }
}

std::string trainerUsage()
{
    return "usage: ringmaster-trainer [--job FILE] [--FLAG VALUE]...\n"
           "One data-parallel rank; reads RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,\n"
           "MASTER_PORT from the environment, else Slurm's: SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS, this\n"
           "node's SLURM_STEP_TASKS_PER_NODE entry; MASTER_ADDR = first host of SLURM_STEP_NODELIST (or\n"
           "SLURM_JOB_NODELIST), MASTER_PORT = 15000 + SLURM_JOB_ID % 17000. So `srun -n 4 ringmaster-trainer`\n"
           "works as is; a MASTER_ADDR or MASTER_PORT you set wins.\n"
           "Every flag is also a job file key, with '_' for '-' (--batch-size 64 or \"batch_size\": 64); flags win.\n"
           "\n" +
           protocol::trainerOptionsUsage() +
           "\n"
           "Actions:\n"
           "  --job FILE                      a JSON job file: its \"trainer\" object (or its top-level keys) of the flags above\n"
           "  --validate-only                 check the flags, job file, dataset headers and that --batch-size fits a rank's\n"
           "                                  shard (world size from WORLD_SIZE, else SLURM_NTASKS, else 1); print 'ok', exit 0 (or 2)\n"
           "  --probe                         as --validate-only, but read the data, run the model on one batch and print one\n"
           "                                  JSON line: format, samples, classes, input shape, parameters, output shape, loss\n"
           "  --help                          this text\n"
           "  --version                       the Ringmaster and LibTorch versions, and whether CUDA and NCCL are compiled in\n"
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
            applyValue(config, key, text);
        } catch (const UsageError& e) {
            throw UsageError("job file '" + path + "': " + e.what());
        }
    }
}

bool isBuiltinModel(const std::string& model)
{
    return protocol::isOptionChoice(protocol::trainerOption("model"), model);
}

// Each value was checked against its row as it was set (type, bounds, choices); what is left is what one row
// cannot say: whether a file exists, a value's own syntax, and options that exclude or need each other.
void validateConfig(const TrainerConfig& c)
{
    std::error_code notAFile; // a name the system refuses (too long, a loop) is no file either, not an exception
    if (!isBuiltinModel(c.model) && !std::filesystem::is_regular_file(c.model, notAFile)) {
        throw UsageError("--model: '" + c.model + "' is neither a built-in model (" +
                         protocol::trainerOption("model").choices + ") nor an existing "
                         "TorchScript file (save one in Python with torch.jit.save(torch.jit.script(model), PATH))");
    }
    parseKeepBest(c.keepBest, true); // its form; whether "auto" keeps one depends on the data
    if (c.out.empty()) throw UsageError("--out: needs a run directory");
    if (c.valSplit > 0.0 && !c.valData.empty()) {
        throw UsageError("--val-split and --val-data both give a validation set: use one of them");
    }
    parseImageSize(c.imageSize);
#if TORCH_VERSION_MAJOR < 2
    if (c.precision == "fp16" && c.device == "cpu") {
        throw UsageError("--precision fp16 on the CPU needs a trainer built against PyTorch 2.x (its CPU autocast has "
                         "fp16; LibTorch " TORCH_VERSION " has not): use --precision bf16 on the CPU, or build one with "
                         "scripts/build-trainer.sh");
    }
#endif
    if (c.backend == "nccl" && c.device != "cuda") {
        throw UsageError("--backend nccl needs --device cuda (NCCL only runs on GPUs); use --backend gloo on cpu");
    }
}

} // namespace ringmaster::trainer
