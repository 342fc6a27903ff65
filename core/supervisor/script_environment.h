#pragma once
// What a user's script finds in its environment beyond its ranks and the rendezvous, declared once for both
// backends: rank_command.cpp sets it for local processes, slurm/batch_script.cpp writes the same into the batch
// script and slurm/slurm_launch_record.cpp records it in commands.json. These are torchrun's defaults, which a
// script written for torchrun may rely on, and the switches that make a framework follow the run's device; each
// is set only where the user's own environment does not already say otherwise. Where a rank's exception goes
// (TORCHELASTIC_ERROR_FILE) is always set: it names this run's folder.

#include <QList>
#include <QPair>
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

// A rank's Python stacks on request: python/sitecustomize.py (first on the ranks' PYTHONPATH) registers
// faulthandler on this signal, writing into this file, when both variables are set. The file is the one the
// launcher's gdb and py-spy dumps go to (stack_dumps.h); the signal is a real-time one, which no library is known
// to take (Lightning's Slurm requeue takes SIGUSR1, the helper module's checkpoint request too).
inline constexpr const char* kStacksFileVariable = "RINGMASTER_STACKS_FILE";
inline constexpr const char* kStacksSignalVariable = "RINGMASTER_STACKS_SIGNAL";
int pythonStacksSignal();
// RUN_DIR/logs/rank-RANK.stacks.txt (runDir and rank as for errorFileOf).
QString stacksFileOf(const QString& runDir, const QString& rank);

// PyTorch's flight recorder for NCCL runs (a script's ranks and the CUDA trainer's): its ring of the last
// collectives (2,000 entries, torch 2.11's default) is dumped into the run directory when NCCL's watchdog times out,
// and when the launcher writes to the rank's pipe (RUN_DIR/logs/nccl-trace-rank-N.pipe, which PyTorch creates)
// on declaring the group hung: RUN_DIR/logs/nccl-trace-rank-N, read with `torchfrtrace` (torch's fr_trace). The
// names are torch 2.11's; each is set only where the user's environment does not already say otherwise.
inline constexpr const char* kNcclDumpOnTimeoutVariable = "TORCH_NCCL_DUMP_ON_TIMEOUT";
inline constexpr const char* kNcclTraceFileVariable = "TORCH_FR_DUMP_TEMP_FILE";        // a stem: + rank
inline constexpr const char* kNcclTracePipeVariable = "TORCH_NCCL_DEBUG_INFO_PIPE_FILE"; // a stem: + rank + ".pipe"
// RUN_DIR/logs/nccl-trace-rank- (runDir may be a shell word), the stem of both.
QString ncclTraceStemOf(const QString& runDir);
// {name, value} of the three, for a run directory (runDir as for ncclTraceStemOf).
QList<QPair<QString, QString>> ncclTraceEnvironment(const QString& runDir);

// The defaults for a script run on device ("cpu" | "cuda"), in order.
QList<EnvironmentDefault> scriptDefaultsFor(const QString& device);

} // namespace ringmaster::supervisor
