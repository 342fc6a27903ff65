#pragma once
// The run directory, declared once: every file and folder name, every CSV's columns, and the one CSV field
// writer, for the trainer and the launcher that write a run and the runs library, the app and the exports that
// read it (no Qt, no LibTorch). Paths are relative to the run directory. README.md beside this header is the
// specification of what each file holds (with wire.h's frames); docs/run-directory.md is the user's view of it.

#include <cstddef>
#include <string>
#include <string_view>

namespace ringmaster::protocol {

// The job as launched, every value resolved (run directory, port, trainer path): core/supervisor/job_spec.h.
inline constexpr const char* kJobFile = "job.json";
// The run's outcome, written when it ends (by the trainer or the launcher): status, steps, last values.
inline constexpr const char* kSummaryFile = "summary.json";
// Rank 0 of the trainer: one row per step (kMetricsColumns) and per evaluation (kEvalColumns).
inline constexpr const char* kMetricsFile = "metrics.csv";
inline constexpr const char* kEvalFile = "eval.csv";
// The launcher: every scalar it received, from the trainer or a script (kScalarsColumns).
inline constexpr const char* kScalarsFile = "scalars.csv";
inline constexpr const char* kClassesFile = "classes.json";      // class index -> name
inline constexpr const char* kModelFile = "model.pt";            // the final weights
inline constexpr const char* kCommandsFile = "commands.json";    // what each rank ran, with its environment
inline constexpr const char* kNotesFile = "notes.json";          // the user's title, notes and colour (runs library)
inline constexpr const char* kEnvironmentFile = "environment.json"; // in an exported bundle: where it was made
inline constexpr const char* kTensorBoardFolder = "tb";          // the trainer's rank 0 event files
inline constexpr const char* kLogsFolder = "logs";
inline constexpr const char* kLauncherLogFile = "logs/launcher.log";
// Rank N's own files under logs/: its output, its threads' stacks when hung, a script's elastic error file, and
// (GPU runs) PyTorch's NCCL flight-recorder trace (the prefix; PyTorch appends the rank). RANK is a number, or a
// shell variable that becomes one ("$SLURM_PROCID" in a batch script).
std::string rankLogFile(std::string_view rank);      // logs/rank-N.log
std::string rankStacksFile(std::string_view rank);   // logs/rank-N.stacks.txt
std::string rankErrorFile(std::string_view rank);    // logs/error-rank-N.json
inline std::string rankLogFile(int rank) { return rankLogFile(std::to_string(rank)); }
inline std::string rankStacksFile(int rank) { return rankStacksFile(std::to_string(rank)); }
inline std::string rankErrorFile(int rank) { return rankErrorFile(std::to_string(rank)); }
inline constexpr const char* kNcclTracePrefix = "logs/nccl-trace-rank-";
// A Slurm run's batch script as submitted, its job id, and the batch script's own output.
inline constexpr const char* kSlurmFolder = "slurm";
inline constexpr const char* kSlurmBatchScriptFile = "slurm/job.sbatch";
inline constexpr const char* kSlurmJobIdFile = "slurm/job-id";
std::string slurmBatchLogFile(std::string_view jobId);   // slurm/batch-<id>.log
// The checkpoints: step-NNNNNNNN.pt; the best one (--keep-best, core/trainer/best_checkpoint.h): best.pt, a hard
// link to the best step's file (a copy on a file system without hard links), and best.json, {"metric", "mode",
// "step", "value", "checkpoint"} where "checkpoint" is that file's name in checkpoints/.
inline constexpr const char* kCheckpointsFolder = "checkpoints";
inline constexpr const char* kCheckpointPrefix = "step-";
inline constexpr const char* kBestCheckpointFile = "best.pt";
inline constexpr const char* kBestRecordFile = "best.json";

// The CSV columns, each name once: the trainer's are also its TensorBoard tags and its frames' keys (wire.h), so
// a value has one name in the CSVs, scalars.csv, exports and TensorBoard.
namespace column {
inline constexpr const char* kStep = "step";
inline constexpr const char* kEpoch = "epoch";
inline constexpr const char* kLoss = "loss";
inline constexpr const char* kLr = "lr";
inline constexpr const char* kSamplesPerSec = "samples_per_sec";
inline constexpr const char* kWallTime = "wall_time";   // Unix seconds
inline constexpr const char* kValLoss = "val_loss";
inline constexpr const char* kValAccuracy = "val_accuracy";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kName = "name";
inline constexpr const char* kValue = "value";
} // namespace column
inline constexpr const char* kMetricsColumns[] = {column::kStep, column::kEpoch, column::kLoss, column::kLr,
                                                  column::kSamplesPerSec, column::kWallTime};
inline constexpr const char* kEvalColumns[] = {column::kEpoch, column::kStep, column::kValLoss, column::kValAccuracy};
inline constexpr const char* kScalarsColumns[] = {column::kStep, column::kWallTime, column::kName, column::kValue};
inline constexpr const char* kSystemColumns[] = {column::kWallTime, column::kRank, column::kName, column::kValue};

// A header line (no newline): the columns joined with ','.
std::string csvHeader(const char* const* columns, std::size_t count);
template <std::size_t N>
std::string csvHeader(const char* const (&columns)[N])
{
    return csvHeader(columns, N);
}
// One field as RFC 4180 writes it: as it is, or in double quotes (inner quotes doubled) when it holds a comma, a
// quote or a line break. The one CSV field writer: scalars.csv, system.csv and every export.
std::string csvField(std::string_view text);

// What every rank used, sampled by the supervisor every 2 s (core/supervisor/system_sampler.h): one row per value,
// kSystemColumns: wall_time Unix seconds, rank the rank whose process tree (and GPU) it is, name one of system_metric's names.
// Long rather than wide: ranks, GPUs and metrics vary from run to run, and a row never changes shape.
inline constexpr const char* kSystemFile = "system.csv";
// The names in system.csv, declared once (the launcher's sampler, a Slurm rank's own heartbeat "usage", exports,
// the app's System panel). The first five describe a rank's process, the rest its GPU.
namespace system_metric {
inline constexpr const char* kCpuPercent = "cpu_percent";       // 100 = one core busy
inline constexpr const char* kRssMiB = "rss_mib";
inline constexpr const char* kThreads = "threads";
inline constexpr const char* kDiskReadMiBps = "disk_read_mib_s"; // storage reads and writes (/proc/PID/io)
inline constexpr const char* kDiskWriteMiBps = "disk_write_mib_s";
inline constexpr const char* kGpuUtilPercent = "gpu_util_percent";
inline constexpr const char* kGpuMemoryMiB = "gpu_memory_mib";
inline constexpr const char* kGpuPowerW = "gpu_power_w";
inline constexpr const char* kGpuTemperatureC = "gpu_temperature_c";
inline constexpr const char* kGpuSmClockMHz = "gpu_sm_clock_mhz";
inline constexpr const char* kGpuPcieTxMiBps = "gpu_pcie_tx_mib_s";
inline constexpr const char* kGpuPcieRxMiBps = "gpu_pcie_rx_mib_s";
// What a rank can say of its own process (heartbeat "usage", core/protocol/wire.h).
inline constexpr const char* kProcessMetrics[] = {kCpuPercent, kRssMiB, kThreads, kDiskReadMiBps, kDiskWriteMiBps};
} // namespace system_metric
// The same samples for TensorBoard, written by the launcher: tags "system/rank<R>/<name>", each step the sample's
// Unix second (it only grows, also across a resume; TensorBoard's Relative and Wall axes read it best). A folder of
// its own: TensorBoard takes one folder's files as written one after the other, and the trainer writes tb/.
inline constexpr const char* kSystemTensorBoardFolder = "tb/system";
// A sample's series, in exports and TensorBoard alike: this prefix, the rank, '/', the name ("system/rank3/cpu_percent").
inline constexpr const char* kSystemSeriesPrefix = "system/rank";
inline std::string systemSeriesName(int rank, std::string_view name)
{
    return kSystemSeriesPrefix + std::to_string(rank) + '/' + std::string(name);
}

} // namespace ringmaster::protocol
