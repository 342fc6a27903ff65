#pragma once
// What a user's script finds in its environment beyond its ranks and the rendezvous, declared once for both
// backends: rank_command.cpp sets it for local processes, slurm/batch_script.cpp writes the same into the batch
// script and slurm/slurm_launch_record.cpp records it in commands.json. These are torchrun's defaults, which a
// script written for torchrun may rely on, and the switches that make a framework follow the run's device; each
// is set only where the user's own environment does not already say otherwise. Where a rank's exception goes
// (TORCHELASTIC_ERROR_FILE) is always set: it names this run's folder.

#include <QList>
#include <QString>

namespace ringmaster::supervisor {

struct EnvironmentDefault
{
    const char* name;
    const char* value;
};

// torchrun's (torch.distributed.run's) values for every worker. Not among them: its TORCHELASTIC_USE_AGENT_STORE,
// which makes the ranks join a store that its agent hosts; under Ringmaster rank 0 hosts the store.
inline constexpr EnvironmentDefault kTorchrunDefaults[] = {
    {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
    {"TORCHELASTIC_SIGNALS_TO_HANDLE", "SIGTERM,SIGINT,SIGHUP,SIGQUIT"},
};

// A run on CPUs: `accelerate launch --cpu`'s switch. Without it Hugging Face Accelerate runs each CPU rank as a
// group of one (under torchrun too), and takes the GPUs of a machine that has them.
inline constexpr EnvironmentDefault kCpuRunDefaults[] = {{"ACCELERATE_USE_CPU", "true"}};

// Where torch.distributed.elastic's @record writes a rank's exception as JSON (torchrun: a temp folder).
inline constexpr const char* kErrorFileVariable = "TORCHELASTIC_ERROR_FILE";

// RUN_DIR/logs/error-rank-RANK.json; runDir and rank may be shell words ("$RINGMASTER_RUN_DIR", "$SLURM_PROCID").
QString errorFileOf(const QString& runDir, const QString& rank);

// The defaults for a script run on device ("cpu" | "cuda"), in order.
QList<EnvironmentDefault> scriptDefaultsFor(const QString& device);

} // namespace ringmaster::supervisor
