#include "trainer/dist_env.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "trainer/errors.h"
#include "trainer/slurm_hostlist.h"

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
constexpr long kMaxSlurmJobId = 4294967295L; // Slurm job ids are 32-bit

// The step's own node list first: a step may run on part of its allocation, and task 0 runs on the
// step's first node.
constexpr std::initializer_list<const char*> kNodeListNames = {"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST",
                                                               "SLURM_NODELIST"};
// Tasks per node: the step's layout (srun sets it), else the job's, else the user's request.
constexpr std::initializer_list<const char*> kTasksPerNodeNames = {"SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE",
                                                                   "SLURM_NTASKS_PER_NODE"};
constexpr std::initializer_list<const char*> kNodeCountNames = {"SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES",
                                                                "SLURM_NNODES"};

// LOCAL_WORLD_SIZE, else this node's entry of Slurm's tasks-per-node list ("2(x3),1", indexed by
// SLURM_NODEID), else the world spread over Slurm's node count, else the whole world (one machine).
// Slurm's values describe the allocation, which may be larger than this step: capped at the world size.
int readLocalWorldSize(const EnvLookup& lookup, int worldSize)
{
    std::string name;
    if (const auto local = firstOf(lookup, {"LOCAL_WORLD_SIZE"}, &name)) {
        return static_cast<int>(parseInteger(name, *local, 1, worldSize));
    }
    if (const auto perNode = firstOf(lookup, kTasksPerNodeNames, &name)) {
        std::vector<int> counts;
        try {
            counts = slurm::expandTaskCounts(*perNode);
        } catch (const slurm::ListSyntaxError& e) {
            throw UsageError("environment variable " + name + "='" + *perNode + "' is not a Slurm task count list (" +
                             e.what() + "): set LOCAL_WORLD_SIZE to the number of ranks on this machine");
        }
        std::size_t node = 0;
        std::string nodeName;
        if (const auto nodeId = firstOf(lookup, {"SLURM_NODEID"}, &nodeName); nodeId && counts.size() > 1) {
            node = static_cast<std::size_t>(parseInteger(nodeName, *nodeId, 0, static_cast<long>(counts.size()) - 1));
        }
        return std::min(counts[node], worldSize);
    }
    if (const auto nodes = firstOf(lookup, kNodeCountNames, &name)) {
        const long nodeCount = parseInteger(name, *nodes, 1, kMaxWorldSize);
        return static_cast<int>((worldSize + nodeCount - 1) / nodeCount);
    }
    return worldSize;
}

// MASTER_ADDR and MASTER_PORT, each else derived from Slurm's environment so that every task of a step
// finds the same rendezvous without talking: the first host of the node list, slurmDerivedPort(job id).
void readMaster(const EnvLookup& lookup, DistEnv& env)
{
    std::string name;
    std::vector<std::string> derived;
    if (const auto addr = firstOf(lookup, {"MASTER_ADDR"}, &name)) {
        env.masterAddr = *addr;
    } else if (const auto nodes = firstOf(lookup, kNodeListNames, &name)) {
        try {
            env.masterAddr = slurm::firstHost(*nodes);
        } catch (const slurm::ListSyntaxError& e) {
            throw UsageError("environment variable " + name + "='" + *nodes + "' is not a Slurm host list (" + e.what() +
                             "): set MASTER_ADDR to the address of rank 0's host");
        }
        derived.push_back("MASTER_ADDR " + env.masterAddr + " = first host of " + name);
    } else {
        throw UsageError("MASTER_ADDR is not set: set it to the address of rank 0's host "
                         "(127.0.0.1 for one machine), or run under srun, which sets SLURM_JOB_NODELIST");
    }

    if (const auto port = firstOf(lookup, {"MASTER_PORT"}, &name)) {
        env.masterPort = static_cast<std::uint16_t>(parseInteger(name, *port, 1, 65535));
    } else if (const auto jobId = firstOf(lookup, {"SLURM_JOB_ID", "SLURM_JOBID"}, &name)) {
        env.masterPort = slurmDerivedPort(parseInteger(name, *jobId, 0, kMaxSlurmJobId));
        derived.push_back("MASTER_PORT " + std::to_string(env.masterPort) + " = " +
                          std::to_string(kSlurmPortBase) + " + " + name + " % " + std::to_string(kSlurmPortSpan));
    } else {
        throw UsageError("MASTER_PORT is not set: set it to a free TCP port on rank 0's host, e.g. 29500 "
                         "(under srun it defaults to one derived from SLURM_JOB_ID)");
    }
    for (const auto& line : derived) env.derivedFromSlurm += (env.derivedFromSlurm.empty() ? "" : ", ") + line;
}

} // namespace

DistEnv readDistEnv()
{
    return readDistEnv(processEnv);
}

std::uint16_t slurmDerivedPort(long jobId)
{
    return static_cast<std::uint16_t>(kSlurmPortBase + jobId % kSlurmPortSpan);
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
    env.localWorldSize = readLocalWorldSize(lookup, env.worldSize);

    if (env.worldSize > 1) readMaster(lookup, env);
    return env;
}

} // namespace ringmaster::trainer
