#include "trainer/device_setup.h"

#include <cstdlib>

#ifdef RINGMASTER_HAVE_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

#include "trainer/cuda_device.h"
#include "trainer/errors.h"

namespace ringmaster::trainer {

torch::Device selectDevice(const std::string& device, const DistEnv& env, std::string* note)
{
    if (device != "cuda") return torch::kCPU;
#ifdef RINGMASTER_HAVE_CUDA
    const int visible = torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
    const CudaDeviceChoice choice = chooseCudaDevice(env, visible);
    if (!choice.error.empty()) throw UsageError(choice.error);
    const auto index = static_cast<c10::DeviceIndex>(choice.index);
    c10::cuda::set_device(index);
    if (note) *note = choice.reason;
    return {torch::kCUDA, index};
#else
    (void)env;
    (void)note;
    throw UsageError("--device cuda: this ringmaster-trainer was built against a LibTorch without CUDA; build a GPU "
                     "trainer against your CUDA PyTorch (scripts/build-trainer.sh --python PATH), or use --device cpu");
#endif
}

void setCudaEnvironment(bool deterministic)
{
    // How an NCCL failure ends. 2 (CleanUpOnly): on a collective timeout or a peer's failure the watchdog aborts
    // the communicators and the next wait() throws, which the rank reports in one line before it exits; the
    // default, 3, ends the process from the watchdog thread with SIGABRT and C++ stack frames.
    ::setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", /*overwrite=*/0);
    ::setenv("TORCH_NCCL_LOG_CPP_STACK_ON_UNCLEAN_SHUTDOWN", "0", /*overwrite=*/0);
    // cuBLAS is deterministic only with a fixed workspace, chosen before its first handle exists.
    if (deterministic) ::setenv("CUBLAS_WORKSPACE_CONFIG", ":4096:8", /*overwrite=*/0);
}

void useDeterministicAlgorithms()
{
    auto& context = at::globalContext();
    context.setDeterministicAlgorithms(true, /*warn_only=*/false);
    context.setDeterministicCuDNN(true);
    context.setBenchmarkCuDNN(false);
}

void setCudaMathSwitches(bool tf32, bool cudnnBenchmark)
{
    auto& context = at::globalContext();
    context.setAllowTF32CuBLAS(tf32);
    context.setAllowTF32CuDNN(tf32);
    context.setBenchmarkCuDNN(cudnnBenchmark);
}

void waitForDeviceStream(const torch::Device& device)
{
#ifdef RINGMASTER_HAVE_CUDA
    if (device.is_cuda()) c10::cuda::getCurrentCUDAStream(device.index()).synchronize();
#else
    (void)device;
#endif
}

std::int64_t freeDeviceMemory(const torch::Device& device)
{
#ifdef RINGMASTER_HAVE_CUDA
    if (device.is_cuda()) {
        const c10::cuda::CUDAGuard guard(device.index());
        std::size_t free = 0;
        std::size_t total = 0;
        if (cudaMemGetInfo(&free, &total) == cudaSuccess) return static_cast<std::int64_t>(free);
    }
#else
    (void)device;
#endif
    return 0;
}

DeviceMemoryPeak peakDeviceMemory(const torch::Device& device)
{
    DeviceMemoryPeak peak;
#ifdef RINGMASTER_HAVE_CUDA
    if (device.is_cuda()) {
        const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
        constexpr std::size_t all = 0; // StatType::AGGREGATE (its namespace moved between 2.x releases)
        peak.allocatedBytes = stats.allocated_bytes[all].peak;
        peak.reservedBytes = stats.reserved_bytes[all].peak;
    }
#else
    (void)device;
#endif
    return peak;
}

torch::Tensor deviceRngState(const torch::Device& device)
{
#ifdef RINGMASTER_HAVE_CUDA
    if (device.is_cuda()) {
        auto generator = at::cuda::detail::getDefaultCUDAGenerator(device.index());
        std::lock_guard<std::mutex> lock(generator.mutex());
        return generator.get_state();
    }
#else
    (void)device;
#endif
    return {};
}

void setDeviceRngState(const torch::Device& device, const torch::Tensor& state)
{
#ifdef RINGMASTER_HAVE_CUDA
    if (device.is_cuda() && state.defined()) {
        auto generator = at::cuda::detail::getDefaultCUDAGenerator(device.index());
        std::lock_guard<std::mutex> lock(generator.mutex());
        generator.set_state(state.cpu());
    }
#else
    (void)device;
    (void)state;
#endif
}

} // namespace ringmaster::trainer
