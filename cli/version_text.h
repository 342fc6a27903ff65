#pragma once
// --version for the Qt programs (ringmaster, ringmaster-launch, ringmaster-runs): the Ringmaster version,
// the Qt version, the LibTorch that ringmaster-trainer was built against and whether CUDA and NCCL are
// compiled in. These programs never load LibTorch (no file includes both Qt and LibTorch headers), so the
// LibTorch facts come from the header CMake generated at configure time (ringmaster_build_info.h).
// Checked before any QApplication exists, so `ringmaster --version` needs no display. The launcher and the app
// add a line naming the trainer they would run and what it was built with (supervisor::foundTrainerLine).

#include <QString>

namespace ringmaster::cli {

// Several lines, the first "PROGRAM VERSION" (the form help2man reads); `extra` (lines) is appended.
QString versionText(const QString& program, const QString& extra = {});

// True when the first argument is --version.
bool isVersionRequest(int argc, char** argv);

// Prints versionText(program, extra) on stdout; returns exit status 0.
int printVersion(const char* program, const QString& extra = {});

} // namespace ringmaster::cli
