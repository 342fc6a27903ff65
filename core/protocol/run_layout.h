#pragma once
// Names in a run directory that the trainer and the launcher write and the runs library reads, declared once for
// all of them (no Qt, no LibTorch). The best checkpoint (--keep-best, core/trainer/best_checkpoint.h):
// checkpoints/best.pt, a hard link to the best step's file (a copy on a file system without hard links), and
// checkpoints/best.json, {"metric", "mode", "step", "value", "checkpoint"} where "checkpoint" is that file's name
// in checkpoints/. The launcher's system metrics: system.csv and tb/system/ (below). See docs/run-directory.md.

#include <string>
#include <string_view>

namespace ringmaster::protocol {

// The run's outcome, written when it ends (by the trainer or the launcher): status, steps, last values.
inline constexpr const char* kSummaryFile = "summary.json";
inline constexpr const char* kCheckpointsFolder = "checkpoints";
inline constexpr const char* kBestCheckpointFile = "best.pt";
inline constexpr const char* kBestRecordFile = "best.json";
// What every rank used, sampled by the supervisor every 2 s (core/supervisor/system_sampler.h): one row per value,
//   wall_time,rank,name,value
// wall_time Unix seconds, rank the rank whose process tree (and GPU) it is, name one of system_metric's names.
// Long rather than wide: ranks, GPUs and metrics vary from run to run, and a row never changes shape.
inline constexpr const char* kSystemFile = "system.csv";
inline constexpr const char* kSystemHeader = "wall_time,rank,name,value";
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
