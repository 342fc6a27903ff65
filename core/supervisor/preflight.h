#pragma once
// Checks made before anything is started, each with a message that names the problem and the fix:
// the trainer binary, the launcher settings, the GPUs (existing, usable, not repeated, enough for
// --nproc), a writable output folder, the trainer's own validation of the hyperparameters and the
// dataset for this world size (ringmaster-trainer --validate-only, given the job's trainer flags as
// flags, so its messages name the flag the user gave), and a free master port. For the user's own
// script, instead of the trainer: the script is a readable file, the interpreter exists and can
// `import torch` (its version is reported). Nothing is created
// when a check fails. A --resume of a run directory that a launcher or the app runs now (it holds the run's
// lock, run_lock.h) is refused first. It can take a second or more: a GUI runs it off its own thread.

#include <QList>

#include <atomic>

#include <QString>
#include <QStringList>

#include "supervisor/job_spec.h"
#include "supervisor/trainer_info.h"

namespace ringmaster::supervisor {

// Bounds on the launcher's timers (they become millisecond ints; a day is plenty).
inline constexpr double kMaxGracePeriodSec = 86400.0;
inline constexpr double kMaxHeartbeatTimeoutSec = 86400.0;

struct PreflightResult
{
    QString error;            // empty when every check passed
    QString trainerPath;      // absolute path of ringmaster-trainer
    TrainerInfo trainer;      // a trainer job: what that trainer was built with (its --version)
    int masterPort = 0;       // the port to use (picked when the job says 0)
    QList<int> gpus;          // cuda: the GPUs, rank i on gpus[i] (see gpu_placement.h)
    QString visibleDevices;   // cuda: CUDA_VISIBLE_DEVICES for every rank
    QStringList gpuNames;     // cuda: NVML's name of gpus[i] ("" where NVML does not list it)
    QString driverVersion;    // cuda: the NVIDIA driver's version as NVML reports it (empty without NVML)
    QString scriptPath;       // a script job: the script's absolute path
    QString interpreterPath;  // a script job: the interpreter's absolute path
    QString torchVersion;     // a script job: torch.__version__ as that interpreter reports it
    bool ok() const { return error.isEmpty(); }
};

// `cancelled`, when given, is polled while the trainer validates: set it (from any thread) and the
// validation process is killed and the result says "cancelled" within about 0.1 s.
PreflightResult runPreflight(const JobSpec& job, const std::atomic_bool* cancelled = nullptr);

// Empty when `folder` exists and is writable, or can be created under a writable ancestor.
QString checkOutputFolder(const QString& folder);

// ringmaster-trainer: the job's trainer_path, else $RINGMASTER_TRAINER, else the one build-trainer made
// (userTrainerPath(), trainer_info.h), else beside this executable, else on PATH.
QString locateTrainer(const JobSpec& job);
// The interpreter of a script job exists and imports torch: interpreterPath and torchVersion, or error
// (the job form's check of its "Interpreter" field; pre-flight makes the same check).
PreflightResult checkScriptInterpreter(const QString& python, const std::atomic_bool* cancelled = nullptr);
// A Python interpreter given as a path, or as a name looked up on PATH; empty when there is none.
QString locateInterpreter(const QString& python);
// NVIDIA GPUs that NVML (or /proc/driver/nvidia/gpus) reports; 0 without a driver.
int nvidiaGpuCount();
// A free TCP port on 127.0.0.1 (0 if none could be bound).
int pickFreePort();
bool portIsFree(int port);

} // namespace ringmaster::supervisor
