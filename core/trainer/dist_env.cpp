#include "dist_env.h"

#include <cerrno>
#include <cstdlib>

#include "errors.h"

namespace ringmaster::trainer {
namespace {

std::optional<std::string> firstOf(const EnvLookup& lookup, std::initializer_list<const char*> names,
                                   std::string* usedName)
{
    for (const char* name : names) {
        if (auto value = lookup(name); value && !value->empty()) {
            *usedName = name;
            return value;
        }
    }
    return std::nullopt;
}

long parseInteger(const std::string& name, const std::string& text, long minValue, long maxValue)
{
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || value < minValue || value > maxValue) {
        throw UsageError("environment variable " + name + "='" + text + "' is not an integer in [" +
                         std::to_string(minValue) + ", " + std::to_string(maxValue) + "]");
    }
    return value;
}

std::optional<std::string> processEnv(const std::string& name)
{
    const char* value = std::getenv(name.c_str());
    return value ? std::optional<std::string>(value) : std::nullopt;
}

constexpr long kMaxWorldSize = 65536;

} // namespace

DistEnv readDistEnv()
{
    return readDistEnv(processEnv);
}

int readWorldSize()
{
    return readWorldSize(processEnv);
}

int readWorldSize(const EnvLookup& lookup)
{
    std::string name;
    const auto worldSize = firstOf(lookup, {"WORLD_SIZE", "SLURM_NTASKS"}, &name);
    return worldSize ? static_cast<int>(parseInteger(name, *worldSize, 1, kMaxWorldSize)) : 1;
}

DistEnv readDistEnv(const EnvLookup& lookup)
{
    DistEnv env;
    std::string name;
    const auto worldSize = firstOf(lookup, {"WORLD_SIZE", "SLURM_NTASKS"}, &name);
    if (!worldSize) {
        // Not launched by any launcher: a single process, no rendezvous needed.
        return env;
    }
    env.worldSize = static_cast<int>(parseInteger(name, *worldSize, 1, kMaxWorldSize));

    const auto rank = firstOf(lookup, {"RANK", "SLURM_PROCID"}, &name);
    if (!rank) {
        throw UsageError("WORLD_SIZE is set but RANK is not: set RANK to this process's index in [0, " +
                         std::to_string(env.worldSize - 1) + "] (or launch with ringmaster-launch/torchrun)");
    }
    env.rank = static_cast<int>(parseInteger(name, *rank, 0, env.worldSize - 1));

    const auto localRank = firstOf(lookup, {"LOCAL_RANK", "SLURM_LOCALID"}, &name);
    env.localRank = localRank ? static_cast<int>(parseInteger(name, *localRank, 0, env.worldSize - 1)) : env.rank;
    const auto localWorld = firstOf(lookup, {"LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE"}, &name);
    env.localWorldSize = localWorld ? static_cast<int>(parseInteger(name, *localWorld, 1, env.worldSize))
                                    : env.worldSize;

    if (env.worldSize > 1) {
        const auto addr = firstOf(lookup, {"MASTER_ADDR"}, &name);
        if (!addr) {
            throw UsageError("MASTER_ADDR is not set: set it to the address of rank 0's host "
                             "(127.0.0.1 for one machine)");
        }
        env.masterAddr = *addr;
        const auto port = firstOf(lookup, {"MASTER_PORT"}, &name);
        if (!port) {
            throw UsageError("MASTER_PORT is not set: set it to a free TCP port on rank 0's host, e.g. 29500");
        }
        env.masterPort = static_cast<std::uint16_t>(parseInteger("MASTER_PORT", *port, 1, 65535));
    }
    return env;
}

} // namespace ringmaster::trainer
