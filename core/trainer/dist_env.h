#pragma once
// The torchrun environment contract (RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT), with Slurm's variables as fallbacks, so the same binary runs under Ringmaster,
// torchrun --no-python, srun, or by hand. Under plain srun nothing sets MASTER_ADDR/MASTER_PORT, so
// every task derives the same ones on its own: the first host of the step's node list and a port
// computed from the job id (a value the user sets always wins).

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace ringmaster::trainer {

struct DistEnv
{
    int rank = 0;
    int localRank = 0;
    int worldSize = 1;
    int localWorldSize = 1;
    std::string masterAddr = "127.0.0.1";
    std::uint16_t masterPort = 29500;
    // What was derived from Slurm's variables, for the log ("" when MASTER_ADDR/MASTER_PORT were set).
    std::string derivedFromSlurm;
};

// The rendezvous port under srun without MASTER_PORT: kSlurmPortBase + job id % kSlurmPortSpan, i.e.
// 15000-31999, below Linux's default ephemeral ports (32768-60999) so no outgoing connection holds it.
inline constexpr long kSlurmPortBase = 15000;
inline constexpr long kSlurmPortSpan = 17000;
std::uint16_t slurmDerivedPort(long jobId);

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// Reads the process environment. Throws UsageError naming the variable that is missing or invalid.
DistEnv readDistEnv();
// The same, against any lookup (tests pass a map).
DistEnv readDistEnv(const EnvLookup& lookup);

// Only the world size (WORLD_SIZE, else SLURM_NTASKS, else 1), for --validate-only: a supervisor
// checks a job before it assigns ranks and a port, so it sets nothing else. Throws UsageError when invalid.
int readWorldSize();
int readWorldSize(const EnvLookup& lookup);

} // namespace ringmaster::trainer
