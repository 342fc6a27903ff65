#pragma once
// What a rank does to its device before anything else exists there, and the device's own state that a
// checkpoint keeps. The CUDA parts compile only where LibTorch has CUDA (RINGMASTER_HAVE_CUDA); the CPU
// build keeps the same calls, which then do what a CPU needs (nothing, or one clear error).
//  - selectDevice: the rank's CUDA device (cuda_device.h decides which), made current before any tensor,
//    stream or NCCL communicator is created, so no rank opens a context on GPU 0 (pytorch#135279).
//  - useDeterministicAlgorithms: --deterministic true: deterministic kernels only (an operation without
//    one is an error), cuDNN deterministic and not benchmarking, cuBLAS's fixed workspace.
//  - deviceRngState / setDeviceRngState: the CUDA generator of the rank's device (dropout masks on a GPU).

#include <cstdint>
#include <string>

#include <torch/torch.h>

#include "trainer/dist_env.h"

namespace ringmaster::trainer {

// "cpu", or the rank's CUDA device, made current. Throws UsageError (no GPU visible, a CPU-only build,
// fewer GPUs than local ranks). `note` receives how the device was chosen, for the log.
torch::Device selectDevice(const std::string& device, const DistEnv& env, std::string* note);

// The environment LibTorch's CUDA parts read (how NCCL failures end; cuBLAS's fixed workspace when
// `deterministic`), set before any thread starts (setenv is not safe beside a getenv) and before the first
// CUDA call; a value the user set wins.
void setCudaEnvironment(bool deterministic);
// Deterministic kernels only, cuDNN deterministic and not benchmarking (after setCudaEnvironment).
void useDeterministicAlgorithms();
// --tf32 and --cudnn-benchmark for a GPU rank: TF32 in cuBLAS's matrix products and cuDNN's convolutions (what
// torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32 switch), and cuDNN timing its kernels
// once per input shape (torch.backends.cudnn.benchmark). The CPU has neither; useDeterministicAlgorithms, called
// after, turns benchmarking off again.
void setCudaMathSwitches(bool tf32, bool cudnnBenchmark);

// Waits until the current stream of a CUDA device has run what was queued on it (not the other streams: NCCL's
// all-reduces run on their own); nothing for the CPU. Step timing's settle (step_timing.h).
void waitForDeviceStream(const torch::Device& device);

// Free memory of a CUDA device in bytes (0 for the CPU).
std::int64_t freeDeviceMemory(const torch::Device& device);

// The most memory LibTorch's caching allocator held on a CUDA device so far (what torch.cuda.max_memory_allocated
// and max_memory_reserved report in Python); both 0 for the CPU.
struct DeviceMemoryPeak
{
    std::int64_t allocatedBytes = 0;
    std::int64_t reservedBytes = 0;
};
DeviceMemoryPeak peakDeviceMemory(const torch::Device& device);

// The generator state of a CUDA device; an undefined tensor for the CPU (whose generator checkpoint.cpp
// keeps on its own).
torch::Tensor deviceRngState(const torch::Device& device);
// Restores it onto `device`. A CPU rank ignores a CUDA state (a run may resume on other hardware).
void setDeviceRngState(const torch::Device& device, const torch::Tensor& state);

} // namespace ringmaster::trainer
