// Drives the per-machine data cache (core/trainer/data/shared_cache.h) in real processes, for
// tests/trainer/test_data_cache.py.
//   ringmaster-cache-probe DIR FINGERPRINT [--n N] [--hold-ms MS] [--build-delay-ms MS] [--fail-build]
//       maps (or builds) the cache of a deterministic dataset: uint8 inputs [N, 1, 28, 28] with
//       byte i = (7 i + i / 4096) mod 251, int64 targets [N] with target j = j mod 10, classes
//       "even" and "odd". The build sleeps MS first (--build-delay-ms) or throws UsageError
//       (--fail-build). Prints one JSON line {"built", "path", "sum", "pid", "shape", "dtype",
//       "classNames", "description"}, where sum = sum_i input_i * (i mod 1000 + 1) + sum_j target_j * (j + 1)
//       over the mapped tensors, then keeps the mapping for --hold-ms MS before it exits.
//   ringmaster-cache-probe fingerprint PATH OPTIONS
//       prints dataFingerprint(PATH, OPTIONS) on stdout and the time it took on stderr.
// Exit codes as the trainer's: 2 for UsageError (and bad arguments), 1 for other errors.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "trainer/data/shared_cache.h"
#include "trainer/errors.h"

namespace rt = ringmaster::trainer;

namespace {

constexpr std::int64_t kImageSide = 28;
constexpr std::int64_t kClasses = 10;
constexpr std::int64_t kPatternModulus = 251;
constexpr std::int64_t kPatternBlock = 4096;
constexpr std::int64_t kWeightPeriod = 1000;

struct ProbeOptions
{
    std::string dir;
    std::string fingerprint;
    std::int64_t samples = 100;
    int holdMs = 0;
    int buildDelayMs = 0;
    bool failBuild = false;
};

rt::LoadedData buildPattern(const ProbeOptions& options)
{
    if (options.buildDelayMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options.buildDelayMs));
    if (options.failBuild) throw rt::UsageError("--data: the probe was told to fail while building");
    rt::LoadedData data;
    data.inputs = torch::empty({options.samples, 1, kImageSide, kImageSide}, torch::kUInt8);
    auto* pixels = data.inputs.data_ptr<std::uint8_t>();
    for (std::int64_t i = 0; i < data.inputs.numel(); ++i)
        pixels[i] = static_cast<std::uint8_t>((7 * i + i / kPatternBlock) % kPatternModulus);
    data.targets = torch::arange(options.samples, torch::kInt64).remainder(kClasses);
    data.classNames = {"even", "odd"};
    data.description = "probe pattern (" + std::to_string(options.samples) + " images)";
    return data;
}

std::int64_t weightedSum(const rt::LoadedData& data)
{
    std::int64_t sum = 0;
    const auto* pixels = data.inputs.data_ptr<std::uint8_t>();
    for (std::int64_t i = 0; i < data.inputs.numel(); ++i) sum += pixels[i] * (i % kWeightPeriod + 1);
    const auto* targets = data.targets.data_ptr<std::int64_t>();
    for (std::int64_t j = 0; j < data.targets.numel(); ++j) sum += targets[j] * (j + 1);
    return sum;
}

int runProbe(const ProbeOptions& options)
{
    const auto cached = rt::mapOrBuildCache(options.dir, options.fingerprint, [&] { return buildPattern(options); });
    const nlohmann::json line = {{"built", cached.built},
                                 {"path", cached.path},
                                 {"sum", weightedSum(cached.data)},
                                 {"pid", ::getpid()},
                                 {"shape", cached.data.inputs.sizes().vec()},
                                 {"dtype", std::string(c10::toString(cached.data.inputs.scalar_type()))},
                                 {"classNames", cached.data.classNames},
                                 {"description", cached.data.description}};
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
    if (options.holdMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(options.holdMs));
    return rt::kExitOk;
}

int runFingerprint(const std::string& path, const std::string& options)
{
    const auto started = std::chrono::steady_clock::now();
    const std::string fingerprint = rt::dataFingerprint(path, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf("%s\n", fingerprint.c_str());
    std::fprintf(stderr, "fingerprint took %.3f s\n", seconds);
    return rt::kExitOk;
}

ProbeOptions parse(const std::vector<std::string>& args)
{
    if (args.size() < 2) throw rt::UsageError("usage: ringmaster-cache-probe DIR FINGERPRINT [options] (see the source)");
    ProbeOptions options;
    options.dir = args[0];
    options.fingerprint = args[1];
    for (std::size_t i = 2; i < args.size(); ++i) {
        const auto value = [&]() -> long long {
            if (i + 1 >= args.size()) throw rt::UsageError(args[i] + " needs a value");
            return std::stoll(args[++i]);
        };
        if (args[i] == "--n") options.samples = value();
        else if (args[i] == "--hold-ms") options.holdMs = static_cast<int>(value());
        else if (args[i] == "--build-delay-ms") options.buildDelayMs = static_cast<int>(value());
        else if (args[i] == "--fail-build") options.failBuild = true;
        else throw rt::UsageError("unknown option " + args[i]);
    }
    return options;
}

} // namespace

int main(int argc, char** argv)
{
    const std::vector<std::string> args(argv + 1, argv + argc);
    try {
        if (args.size() == 3 && args[0] == "fingerprint") return runFingerprint(args[1], args[2]);
        return runProbe(parse(args));
    } catch (const rt::UsageError& error) {
        std::fprintf(stderr, "error: %s\n", error.what());
        return rt::kExitUsage;
    } catch (const std::exception& error) {
        std::fprintf(stderr, "error: %s\n", rt::oneLineMessage(error).c_str());
        return rt::kExitFailure;
    }
}
