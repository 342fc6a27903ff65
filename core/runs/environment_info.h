#pragma once
// environment.json of a run bundle: what someone reading a bug report or reproducing a result needs to
// know about where the run was made and where the bundle was made. Ringmaster's version, Qt's version,
// the host and OS of the bundling machine; from the run's own files, whatever they recorded (the device,
// backend, world size and the LibTorch/CUDA/NCCL versions the trainer was compiled with from summary.json,
// the GPUs and launch settings from job.json, the names of the GPUs the ranks got and the driver's version
// from commands.json's "hardware", as the launcher saw them through NVML) and the exact command line of
// each rank from commands.json when the launcher wrote one. What a run did not record is null, never guessed.

#include <QJsonObject>
#include <QString>

namespace ringmaster::runs {

// The Ringmaster version these programs were built as (the project's version in CMakeLists.txt).
QString ringmasterVersion();

QJsonObject environmentOf(const QString& runDir);

} // namespace ringmaster::runs
