#include "trainer/version_info.h"

#include <torch/version.h>

#include "protocol/trainer_version.h"
#include "ringmaster_build_info.h"

#ifdef RINGMASTER_HAVE_NCCL
#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>
#endif
#if __has_include(<nccl.h>)
#include <nccl.h>
#endif
#endif

namespace ringmaster::trainer {

std::string compiledLibTorchVersion()
{
    return TORCH_VERSION;
}

std::string compiledCudaVersion()
{
#if defined(RINGMASTER_HAVE_NCCL) && defined(CUDART_VERSION)
    constexpr int kMajorScale = 1000; // CUDART_VERSION is 1000 * major + 10 * minor
    constexpr int kMinorScale = 10;
    return std::to_string(CUDART_VERSION / kMajorScale) + "." + std::to_string(CUDART_VERSION % kMajorScale / kMinorScale);
#else
    return {};
#endif
}

std::string compiledNcclVersion()
{
#if defined(RINGMASTER_HAVE_NCCL) && defined(NCCL_MAJOR) && defined(NCCL_MINOR) && defined(NCCL_PATCH)
    return std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH);
#else
    return {};
#endif
}

std::string trainerVersionText()
{
    namespace words = protocol::trainer_version;
#ifdef RINGMASTER_HAVE_NCCL
    auto compiledIn = [](const std::string& version) {
        return version.empty() ? std::string(words::kYes) : std::string(words::kYes) + " (" + version + ")";
    };
    const std::string cuda = compiledIn(compiledCudaVersion());
    const std::string nccl = compiledIn(compiledNcclVersion());
#else
    const std::string cuda = words::kNoCuda;
    const std::string nccl = cuda;
#endif
    return std::string("ringmaster-trainer " RINGMASTER_BUILD_VERSION "\n") + words::kLibTorchPrefix + TORCH_VERSION + "\n" +
           words::kCudaPrefix + cuda + "\n" + words::kNcclPrefix + nccl + "\n" + words::kGlooPrefix + words::kYes + "\n";
}

} // namespace ringmaster::trainer
