#pragma once
// ringmaster-trainer --version and summary.json's build fields: the Ringmaster version, the LibTorch this
// binary was compiled against and, in a build whose LibTorch has CUDA, the CUDA runtime and NCCL versions
// of the headers it was compiled with (plain C++; the generated ringmaster_build_info.h gives the
// Ringmaster version, <torch/version.h> the LibTorch one, <cuda_runtime_api.h> and <nccl.h> the others).
// A file of its own so that config.cpp does not include LibTorch headers just to print a version.

#include <string>

namespace ringmaster::trainer {

// Several lines, the first "ringmaster-trainer VERSION" (the form help2man reads).
std::string trainerVersionText();

// "2.1.0": TORCH_VERSION.
std::string compiledLibTorchVersion();
// "12.1" (CUDART_VERSION) and "2.18.1" (NCCL_MAJOR.NCCL_MINOR.NCCL_PATCH); empty in a build without CUDA
// (and where the header is not found, which a CUDA build of LibTorch does not allow).
std::string compiledCudaVersion();
std::string compiledNcclVersion();

} // namespace ringmaster::trainer
