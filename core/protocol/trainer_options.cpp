#include "protocol/trainer_options.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace ringmaster::protocol {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr OptionBounds kAny{};
constexpr OptionBounds atLeast(double low) { return {low, kInf, false, false}; }
constexpr OptionBounds above(double low) { return {low, kInf, true, false}; }
constexpr OptionBounds fromBelow(double low, double high) { return {low, high, false, true}; } // [low, high)
constexpr OptionBounds aboveUpTo(double low, double high) { return {low, high, true, false}; } // (low, high]

using T = OptionType;
constexpr const char* kModelAndData = "Model and data";
constexpr const char* kTraining = "Training";
constexpr const char* kOutputs = "Evaluation, checkpoints, output";
constexpr const char* kDevices = "Devices and distribution";

// clang-format off
const TrainerOption kOptions[] = {
    {"model", T::Text, "cnn", "cnn|mlp|linear", kAny, "cnn|mlp|linear|FILE.pt", kModelAndData, "Model",
     "a built-in model or a TorchScript file (torch.jit.save(torch.jit.script(model), PATH)); it is trained as it is"},
    {"data", T::Text, "fashion-mnist", "fashion-mnist|synthetic", kAny, "PATH", kModelAndData, "Training data",
     "fashion-mnist, synthetic, an IDX or image folder (a sub-folder per class), FILE.csv or FILE.pt: the format is detected"},
    {"val_data", T::Text, "", "", kAny, "PATH", kModelAndData, "Validation",
     "validation data, of the same kinds as --data"},
    {"val_split", T::Real, "0", "", fromBelow(0, 1), "F", kModelAndData, "Validation",
     "hold out this seeded fraction of --data for validation instead (0: none)"},
    {"label_column", T::Text, "", "", kAny, "NAME", kModelAndData, "Label column",
     "CSV data: the column that holds the label or target (default: the last)"},
    {"image_size", T::Text, "", "", kAny, "H,W", kModelAndData, "Image size",
     "resize every image to H,W pixels (default: keep each image's size)"},
    {"loss", T::Choice, "auto", "auto|cross_entropy|mse|bce", kAny, "", kModelAndData, "Loss",
     "auto: cross_entropy for class labels, mse for float targets"},
    {"normalize", T::Text, "auto", "auto|none", kAny, "auto|none|MEAN,STD|M1,..,MC,S1,..,SC", kModelAndData, "Normalize inputs",
     "auto: images standardised per channel; none: as read; or the mean and standard deviation (per channel)"},
    {"data_cache", T::Text, "", "off", kAny, "DIR|off", kModelAndData, "Data cache",
     "decoded data shared by the ranks of this machine (default $RINGMASTER_DATA_CACHE, else "
     "$XDG_CACHE_HOME/ringmaster/data or ~/.cache/ringmaster/data)"},
    {"synthetic_samples", T::Integer, "4096", "", atLeast(1), "N", kModelAndData, "Synthetic samples",
     "the size of the synthetic regression set (--data synthetic)"},
    {"data_placement", T::Choice, "auto", "auto|device|host", kAny, "", kModelAndData, "Data placement",
     "on a GPU, where the compact data lives (auto: on the GPU when it takes at most a quarter of its free memory); "
     "ignored on cpu"},

    {"epochs", T::Integer, "1", "", atLeast(1), "N", kTraining, "Epochs", "passes over the training set"},
    {"max_steps", T::Integer, "0", "", atLeast(0), "N", kTraining, "Max steps",
     "stop after this many optimizer steps (0: no limit besides --epochs)"},
    {"batch_size", T::Integer, "64", "", atLeast(1), "N", kTraining, "Batch per rank",
     "samples per rank per step; the global batch is this times the number of ranks"},
    {"lr", T::Real, "0.01", "", above(0), "X", kTraining, "Learning rate", "the peak learning rate (e.g. 0.01 or 3e-4)"},
    {"optimizer", T::Choice, "sgd", "sgd|adam|adamw", kAny, "", kTraining, "Optimizer", "SGD with momentum, Adam or AdamW"},
    {"momentum", T::Real, "0.9", "", fromBelow(0, 1), "X", kTraining, "Momentum", "SGD's momentum (ignored by Adam and AdamW)"},
    {"weight_decay", T::Real, "0", "", atLeast(0), "X", kTraining, "Weight decay",
     "L2 for SGD and Adam, decoupled for AdamW"},
    {"lr_schedule", T::Choice, "constant", "constant|step|cosine", kAny, "", kTraining, "LR schedule",
     "after the warm-up: constant, step (times --lr-gamma every --lr-step-size steps) or cosine (to 0 at the end)"},
    {"warmup_steps", T::Integer, "0", "", atLeast(0), "N", kTraining, "Warm-up steps",
     "linear warm-up from 0 to --lr over this many steps"},
    {"lr_step_size", T::Integer, "0", "", atLeast(0), "N", kTraining, "LR step size",
     "the step schedule's steps per decay (0: one epoch)"},
    {"lr_gamma", T::Real, "0.1", "", aboveUpTo(0, 1), "X", kTraining, "LR decay factor",
     "the step schedule's factor at each decay"},
    {"seed", T::Integer, "42", "", atLeast(0), "N", kTraining, "Seed",
     "seeds the initialisation and the per-epoch shuffle (DistributedSampler's semantics)"},
    {"drop_last", T::Boolean, "false", "", kAny, "", kTraining, "Drop the last batch",
     "the sampler drops the tail that does not fill a batch on every rank instead of padding it"},
    {"precision", T::Choice, "fp32", "fp32|bf16|fp16", kAny, "", kTraining, "Precision",
     "autocast's type for the forward pass and the loss, as torch.autocast (weights, gradients and the optimizer stay "
     "fp32); fp16 scales the loss as torch.amp.GradScaler: a step with inf/NaN gradients is skipped and the scale "
     "halved, --loss-scale-growth-interval finite steps in a row double it"},
    {"loss_scale", T::Real, "65536", "", above(0), "X", kTraining, "First loss scale", "fp16: the loss scaler's first scale"},
    {"loss_scale_growth_interval", T::Integer, "2000", "", atLeast(1), "N", kTraining, "Loss scale growth (steps)",
     "fp16: finite steps in a row before the scale doubles"},

    {"eval_every", T::Integer, "1", "", atLeast(0), "N", kOutputs, "Eval every (epochs)",
     "evaluate on the validation or test split every N epochs (0: only at the end)"},
    {"eval_batch_size", T::Integer, "256", "", atLeast(1), "N", kOutputs, "Eval batch size",
     "samples per evaluation batch"},
    {"checkpoint_every", T::Integer, "0", "", atLeast(0), "N", kOutputs, "Checkpoint every (steps)",
     "write a checkpoint every N steps (0: at the end of each epoch)"},
    {"keep_checkpoints", T::Integer, "3", "", atLeast(1), "N", kOutputs, "Keep checkpoints",
     "how many checkpoints to keep (the oldest are removed)"},
    {"keep_best", T::Text, "auto", "auto|val_loss:min|val_accuracy:max|none", kAny, "val_loss|val_accuracy[:min|max]|none|auto",
     kOutputs, "Keep the best by",
     "checkpoint each evaluation that beats the best so far, never rotated away, as checkpoints/best.pt "
     "(auto: val_loss:min when there is validation)"},
    {"log_every", T::Integer, "10", "", atLeast(1), "N", kOutputs, "Log every (steps)",
     "a metric line on standard output every N steps (metrics.csv gets every step)"},
    {"out", T::Text, "runs/trainer", "", kAny, "RUN_DIR", kOutputs, "Run directory",
     "where this run's files go (the launcher names a new one per run)", OptionOwner::Launcher},
    {"resume", T::Text, "", "", kAny, "CHECKPOINT|RUN_DIR", kOutputs, "Resume from",
     "continue from a checkpoint, or from a run directory's newest one", OptionOwner::Launcher},

    {"device", T::Choice, "cpu", "cpu|cuda", kAny, "", kDevices, "Device", "where this rank computes",
     OptionOwner::Launcher},
    {"backend", T::Choice, "", "gloo|nccl", kAny, "", kDevices, "Backend",
     "the process group's backend (default: nccl on cuda, gloo on cpu)"},
    {"threads", T::Integer, "0", "", atLeast(0), "N", kDevices, "Threads per rank",
     "intra-op threads per rank (0: this machine's cores / its ranks)"},
    {"bucket_mb", T::Real, "25", "", above(0), "X", kDevices, "Bucket size (MB)",
     "gradient bucket size, as DDP's bucket_cap_mb"},
    {"local_allreduce", T::Choice, "shm", "shm|gloo", kAny, "", kDevices, "Local all-reduce",
     "how CPU ranks on one machine all-reduce their gradients: shared memory or Gloo"},
    {"find_unused_parameters", T::Boolean, "false", "", kAny, "", kDevices, "Find unused parameters",
     "average parameters a step left without a gradient as zeros, as PyTorch DDP (false: such a step is an error)"},
    {"rendezvous_timeout", T::Real, "300", "", above(0), "SEC", kDevices, "Rendezvous timeout (s)",
     "how long the ranks wait for each other at the start"},
    {"collective_timeout", T::Real, "300", "", above(0), "SEC", kDevices, "Collective timeout (s)",
     "how long one collective (an all-reduce) may take before the rank fails"},
    {"force_collectives", T::Boolean, "false", "", kAny, "", kDevices, "Force collectives",
     "run the process group and all-reduces even with one rank (checks a backend, e.g. NCCL, on a one-GPU machine)"},
    {"deterministic", T::Boolean, "false", "", kAny, "", kDevices, "Deterministic kernels",
     "deterministic kernels only (cuDNN without benchmarking, cuBLAS's fixed workspace; an operation without one "
     "is an error)"},
    {"tf32", T::Boolean, "true", "", kAny, "", kDevices, "TF32", "on cuda: TF32 matrix products and convolutions"},
    {"cudnn_benchmark", T::Boolean, "true", "", kAny, "", kDevices, "cuDNN benchmark",
     "on cuda: cuDNN picks the fastest kernel per shape (off with --deterministic true)"},
};
// clang-format on

std::string numberText(double value)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
}

bool parseReal(std::string_view text, double* value)
{
    const std::string copy(text);
    char* end = nullptr;
    *value = std::strtod(copy.c_str(), &end);
    return end != copy.c_str() && *end == '\0' && std::isfinite(*value);
}

bool parseInteger(std::string_view text, double* value)
{
    const std::string copy(text);
    char* end = nullptr;
    errno = 0;
    const long long parsed = std::strtoll(copy.c_str(), &end, 10);
    if (errno != 0 || end == copy.c_str() || *end != '\0') return false;
    *value = static_cast<double>(parsed);
    return true;
}

bool within(const OptionBounds& b, double value)
{
    const bool lowOk = b.lowOpen ? value > b.low : value >= b.low;
    const bool highOk = b.highOpen ? value < b.high : value <= b.high;
    return lowOk && highOk;
}

// One option's line(s) in --help: "  --flag VALUES   help (default: X)".
std::string usageLine(const TrainerOption& o)
{
    std::string values = o.metavar;
    if (o.type == OptionType::Boolean) values = "true|false";
    if (o.type == OptionType::Choice) values = o.choices;
    std::string line = "  " + optionFlagOf(o.key) + " " + values;
    const std::string help = optionHelpText(o);
    constexpr std::size_t kHelpColumn = 34;
    line += line.size() < kHelpColumn ? std::string(kHelpColumn - line.size(), ' ') : std::string("\n") + std::string(kHelpColumn, ' ');
    // The help wrapped at 110 columns, continuation lines under its start.
    constexpr std::size_t kWidth = 110;
    std::size_t column = kHelpColumn;
    std::size_t start = 0;
    while (start < help.size()) {
        std::size_t end = help.find(' ', start);
        if (end == std::string::npos) end = help.size();
        const std::string word = help.substr(start, end - start);
        if (column > kHelpColumn && column + 1 + word.size() > kWidth) {
            line += "\n" + std::string(kHelpColumn, ' ');
            column = kHelpColumn;
        } else if (column > kHelpColumn) {
            line += ' ';
            ++column;
        }
        line += word;
        column += word.size();
        start = end + 1;
    }
    return line + "\n";
}

} // namespace

const TrainerOption* trainerOptionsBegin() { return std::begin(kOptions); }
const TrainerOption* trainerOptionsEnd() { return std::end(kOptions); }

std::string optionKeyOf(std::string_view flagOrKey)
{
    while (!flagOrKey.empty() && flagOrKey.front() == '-') flagOrKey.remove_prefix(1);
    std::string key(flagOrKey);
    for (char& ch : key) {
        if (ch == '-') ch = '_';
    }
    return key;
}

std::string optionFlagNameOf(std::string_view key)
{
    std::string name = optionKeyOf(key);
    for (char& ch : name) {
        if (ch == '_') ch = '-';
    }
    return name;
}

std::string optionFlagOf(std::string_view key) { return "--" + optionFlagNameOf(key); }

const TrainerOption* findTrainerOption(std::string_view key)
{
    const std::string wanted = optionKeyOf(key);
    for (const TrainerOption& option : kOptions) {
        if (wanted == option.key) return &option;
    }
    return nullptr;
}

const TrainerOption& trainerOption(std::string_view key)
{
    const TrainerOption* option = findTrainerOption(key);
    if (!option) {
        std::fprintf(stderr, "ringmaster: internal error: no trainer option '%.*s'\n", static_cast<int>(key.size()), key.data());
        std::abort();
    }
    return *option;
}

std::size_t optionChoiceCount(const TrainerOption& option)
{
    const std::string_view choices = option.choices;
    if (choices.empty()) return 0;
    std::size_t count = 1;
    for (char ch : choices) count += ch == '|';
    return count;
}

std::string optionChoice(const TrainerOption& option, std::size_t index)
{
    std::string_view rest = option.choices;
    for (std::size_t i = 0; i < index; ++i) {
        const auto bar = rest.find('|');
        if (bar == std::string_view::npos) return {};
        rest.remove_prefix(bar + 1);
    }
    return std::string(rest.substr(0, rest.find('|')));
}

bool isOptionChoice(const TrainerOption& option, std::string_view value)
{
    for (std::size_t i = 0; i < optionChoiceCount(option); ++i) {
        if (optionChoice(option, i) == value) return true;
    }
    return false;
}

bool parseOptionBoolean(std::string_view text, bool* value)
{
    if (text == "1" || text == "true" || text == "yes") return *value = true, true;
    if (text == "0" || text == "false" || text == "no") return *value = false, true;
    return false;
}

std::string optionBoundsText(const OptionBounds& b)
{
    const bool low = std::isfinite(b.low);
    const bool high = std::isfinite(b.high);
    if (low && high) {
        return "in " + std::string(b.lowOpen ? "(" : "[") + numberText(b.low) + ", " + numberText(b.high) + (b.highOpen ? ")" : "]");
    }
    if (low) return (b.lowOpen ? "> " : ">= ") + numberText(b.low);
    if (high) return (b.highOpen ? "< " : "<= ") + numberText(b.high);
    return {};
}

std::string optionValueProblem(const TrainerOption& option, std::string_view value)
{
    const std::string shown(value);
    double number = 0;
    bool flag = false;
    switch (option.type) {
    case OptionType::Text:
        return {};
    case OptionType::Boolean:
        return parseOptionBoolean(value, &flag) ? std::string() : "'" + shown + "' is not a boolean (true or false)";
    case OptionType::Choice:
        if (isOptionChoice(option, value) || (value.empty() && !*option.defaultValue)) return {};
        return "unknown value '" + shown + "' (valid: " + option.choices + ")";
    case OptionType::Integer:
        if (!parseInteger(value, &number)) return "'" + shown + "' is not an integer";
        break;
    case OptionType::Real:
        if (!parseReal(value, &number)) return "'" + shown + "' is not a number";
        break;
    }
    if (!within(option.bounds, number)) return "must be " + optionBoundsText(option.bounds) + ", got " + shown;
    return {};
}

std::string optionHelpText(const TrainerOption& option)
{
    std::string notes = optionBoundsText(option.bounds);
    const auto note = [&notes](const std::string& text) { notes += (notes.empty() ? "" : "; ") + text; };
    if (*option.defaultValue) note("default " + std::string(option.defaultValue));
    if (option.owner == OptionOwner::Launcher) note("ringmaster-launch sets it");
    return std::string(option.help) + (notes.empty() ? "" : " (" + notes + ")");
}

std::string trainerOptionsUsage()
{
    std::string text;
    std::string group;
    for (const TrainerOption& option : kOptions) {
        if (option.group != group) {
            group = option.group;
            text += (text.empty() ? "" : "\n") + group + ":\n";
        }
        text += usageLine(option);
    }
    return text;
}

} // namespace ringmaster::protocol
