#pragma once
// The lines of `ringmaster-trainer --version` that the launcher and the app read: which LibTorch the binary was
// built against and whether CUDA and NCCL are compiled in. The trainer writes them (version_info.cpp), the
// supervisor parses them (trainer_info.cpp); both take the words from here.
//   ringmaster-trainer 0.1.0
//   LibTorch 2.11.0
//   CUDA: yes (13.0)          or   CUDA: no (LibTorch built without CUDA)
//   NCCL: yes (2.28.9)        or   NCCL: no (LibTorch built without CUDA)
//   Gloo: yes

namespace ringmaster::protocol::trainer_version {

inline constexpr char kLibTorchPrefix[] = "LibTorch ";
inline constexpr char kCudaPrefix[] = "CUDA: ";
inline constexpr char kNcclPrefix[] = "NCCL: ";
inline constexpr char kGlooPrefix[] = "Gloo: ";
inline constexpr char kYes[] = "yes";
inline constexpr char kNoCuda[] = "no (LibTorch built without CUDA)";

} // namespace ringmaster::protocol::trainer_version
