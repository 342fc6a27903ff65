#pragma once
// ringmaster-trainer --version: the Ringmaster version, the LibTorch this binary was compiled against and
// whether CUDA and the NCCL backend are compiled in (plain C++; the generated ringmaster_build_info.h
// gives the Ringmaster version, <torch/version.h> the LibTorch one). A file of its own so that config.cpp
// does not include LibTorch headers just to print a version.

#include <string>

namespace ringmaster::trainer {

// Several lines, the first "ringmaster-trainer VERSION" (the form help2man reads).
std::string trainerVersionText();

} // namespace ringmaster::trainer
