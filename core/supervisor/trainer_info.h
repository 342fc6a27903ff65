#pragma once
// Which ringmaster-trainer the launcher and the app run, and what it was built with (its --version lines,
// core/protocol/trainer_version.h): the launcher names it when a run starts, the Devices panel shows it, and
// pre-flight refuses a GPU job for a trainer without CUDA before anything starts, with the command that builds
// one against the user's own CUDA PyTorch (scripts/build-trainer.sh; ringmaster-build-trainer when installed).
// That command puts its trainer at userTrainerPath(), which locateTrainer (preflight.h) prefers to the one
// installed beside the app.

#include <QString>

#include <atomic>

namespace ringmaster::supervisor {

struct TrainerInfo
{
    QString path;
    QString libtorch; // "2.11.0"
    QString cuda;     // "13.0"; empty: built without CUDA
    QString nccl;     // "2.28.9"; empty: built without NCCL
    QString error;    // why --version gave no answer (then the fields above are empty)

    bool known() const { return error.isEmpty() && !libtorch.isEmpty(); }
    bool hasCuda() const { return !cuda.isEmpty(); }
    // "LibTorch 2.11.0, CUDA 13.0, NCCL 2.28.9" or "LibTorch 1.13.0, CPU only".
    QString summary() const;
};

// Runs `path --version` (bounded: LibTorch's libraries take a few seconds to load on a busy machine).
TrainerInfo describeTrainer(const QString& path, const std::atomic_bool* cancelled = nullptr);
// Parses that output (exposed for tests).
TrainerInfo parseTrainerVersion(const QString& path, const QString& versionText);

// $XDG_DATA_HOME/ringmaster/bin/ringmaster-trainer (by default ~/.local/share/ringmaster/bin/...): where
// build-trainer puts the trainer it builds.
QString userTrainerPath();

// "Trainer: PATH (LibTorch 2.11.0, CUDA 13.0, NCCL 2.28.9)": the trainer locateTrainer finds with no job file,
// described (the launcher's and the app's --version; needs a QCoreApplication).
QString foundTrainerLine();

// The one line for a GPU job given a trainer without CUDA, naming the command that builds one.
QString trainerWithoutCudaMessage(const TrainerInfo& trainer);

} // namespace ringmaster::supervisor
