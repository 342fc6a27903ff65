#include "gpu_processes.h"

#include <QByteArray>

#include <dlfcn.h>

#include <type_traits>
#include <vector>

namespace ringmaster::ui {
namespace {

// The NVML ABI, as declared in nvml.h (only what is called here).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
// nvmlProcessInfo_v1_t (the unversioned entry point) and nvmlProcessInfo_t (_v2 and _v3).
struct ProcessInfoV1 { unsigned pid; unsigned long long usedGpuMemory; };
struct ProcessInfoV3 { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; };
// Processes may start between the two calls: room for a few more than counted.
constexpr unsigned kSpareSlots = 8;

template<typename Info>
QList<qint64> pidsOf(NvmlReturn (*list)(NvmlDevice, unsigned*, Info*), NvmlDevice device)
{
    unsigned count = 0;
    NvmlReturn result = list(device, &count, nullptr);
    if (result != kNvmlSuccess && result != kNvmlInsufficientSize) return {};
    if (count == 0) return {};
    std::vector<Info> infos(count + kSpareSlots);
    count = static_cast<unsigned>(infos.size());
    if (list(device, &count, infos.data()) != kNvmlSuccess) return {};
    QList<qint64> pids;
    for (unsigned i = 0; i < count && i < infos.size(); ++i) pids.append(infos[i].pid);
    return pids;
}

} // namespace

struct GpuProcesses::Api
{
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*count)(unsigned*) = nullptr;
    NvmlReturn (*handle)(unsigned, NvmlDevice*) = nullptr;
    NvmlReturn (*listV3)(NvmlDevice, unsigned*, ProcessInfoV3*) = nullptr;
    NvmlReturn (*listV1)(NvmlDevice, unsigned*, ProcessInfoV1*) = nullptr;
};

GpuProcesses::GpuProcesses()
{
    const QByteArray override = qgetenv("RINGMASTER_NVML_LIBRARY");
    const QByteArray path = override.isEmpty() ? QByteArrayLiteral("libnvidia-ml.so.1") : override;
    m_library = ::dlopen(path.constData(), RTLD_NOW | RTLD_LOCAL);
    if (!m_library) return;
    auto* api = new Api;
    auto bind = [this](auto& function, const char* name) {
        function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(::dlsym(m_library, name));
        return function != nullptr;
    };
    const bool core = bind(api->init, "nvmlInit_v2") && bind(api->shutdown, "nvmlShutdown") &&
                      bind(api->count, "nvmlDeviceGetCount_v2") && bind(api->handle, "nvmlDeviceGetHandleByIndex_v2");
    // _v3 and _v2 share a layout; the unversioned entry point is the old v1 layout.
    if (!bind(api->listV3, "nvmlDeviceGetComputeRunningProcesses_v3")) bind(api->listV3, "nvmlDeviceGetComputeRunningProcesses_v2");
    if (!api->listV3) bind(api->listV1, "nvmlDeviceGetComputeRunningProcesses");
    if (core && (api->listV3 || api->listV1) && api->init() == kNvmlSuccess) {
        m_api = api;
        return;
    }
    delete api;
    ::dlclose(m_library);
    m_library = nullptr;
}

GpuProcesses::~GpuProcesses()
{
    if (m_api) {
        m_api->shutdown();
        delete m_api;
    }
    if (m_library) ::dlclose(m_library);
}

QHash<int, QList<qint64>> GpuProcesses::query() const
{
    QHash<int, QList<qint64>> processes;
    unsigned count = 0;
    if (!m_api || m_api->count(&count) != kNvmlSuccess) return processes;
    for (unsigned i = 0; i < count; ++i) {
        NvmlDevice device = nullptr;
        if (m_api->handle(i, &device) != kNvmlSuccess) continue;
        const QList<qint64> pids = m_api->listV3 ? pidsOf(m_api->listV3, device) : pidsOf(m_api->listV1, device);
        if (!pids.isEmpty()) processes.insert(static_cast<int>(i), pids);
    }
    return processes;
}

} // namespace ringmaster::ui
