#include "supervisor/gpu_inventory.h"

#include <vector>

#include <dlfcn.h>

namespace ringmaster::supervisor {
namespace {

// The NVML ABI, as declared in nvml.h (only what we call).
using NvmlReturn = int;
using NvmlDevice = struct NvmlDeviceOpaque*;
constexpr NvmlReturn kNvmlSuccess = 0;
constexpr NvmlReturn kNvmlInsufficientSize = 7;
constexpr unsigned kNvmlTemperatureGpu = 0;
constexpr unsigned kNvmlClockSm = 1;      // NVML_CLOCK_SM
constexpr unsigned kNvmlPcieTxBytes = 0;  // NVML_PCIE_UTIL_TX_BYTES
constexpr unsigned kNvmlPcieRxBytes = 1;  // NVML_PCIE_UTIL_RX_BYTES
constexpr unsigned kProcessSlack = 8; // processes may start between the two calls
struct NvmlMemory { unsigned long long total, free, used; };
struct NvmlUtilization { unsigned gpu, memory; };
// nvmlProcessInfo_v1_t (the unversioned entry point) and nvmlProcessInfo_t (the _v2 and _v3 entry points).
struct NvmlProcessInfoV1 { unsigned pid; unsigned long long usedGpuMemory; };
struct NvmlProcessInfoV3 { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; };

// Counts the compute processes on a device and lists their pids with the layout `Info` of the bound entry point.
template<typename Info>
void readProcesses(NvmlReturn (*list)(NvmlDevice, unsigned*, Info*), NvmlDevice device, GpuInfo* info)
{
    unsigned count = 0;
    const NvmlReturn result = list(device, &count, nullptr);
    if (result != kNvmlSuccess && result != kNvmlInsufficientSize) return;
    info->otherProcesses = static_cast<int>(count);
    if (count == 0) return;
    std::vector<Info> infos(count + kProcessSlack);
    unsigned listed = static_cast<unsigned>(infos.size());
    if (list(device, &listed, infos.data()) != kNvmlSuccess) return;
    for (unsigned i = 0; i < listed && i < infos.size(); ++i) info->processPids.append(infos[i].pid);
    info->otherProcesses = static_cast<int>(info->processPids.size());
}

} // namespace

struct GpuInventory::Api
{
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*count)(unsigned*) = nullptr;
    NvmlReturn (*handle)(unsigned, NvmlDevice*) = nullptr;
    NvmlReturn (*name)(NvmlDevice, char*, unsigned) = nullptr;
    NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
    NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
    NvmlReturn (*temperature)(NvmlDevice, unsigned, unsigned*) = nullptr;
    NvmlReturn (*processesV3)(NvmlDevice, unsigned*, NvmlProcessInfoV3*) = nullptr;
    NvmlReturn (*processesV1)(NvmlDevice, unsigned*, NvmlProcessInfoV1*) = nullptr;
    NvmlReturn (*uuid)(NvmlDevice, char*, unsigned) = nullptr;
    NvmlReturn (*driverVersion)(char*, unsigned) = nullptr;
    NvmlReturn (*power)(NvmlDevice, unsigned*) = nullptr;                     // milliwatts
    NvmlReturn (*clock)(NvmlDevice, unsigned, unsigned*) = nullptr;           // MHz
    NvmlReturn (*pcieThroughput)(NvmlDevice, unsigned, unsigned*) = nullptr;  // KB/s
};

GpuInventory::GpuInventory()
{
    const QByteArray override = qgetenv("RINGMASTER_NVML_LIBRARY");
    const QByteArray path = override.isEmpty() ? QByteArrayLiteral("libnvidia-ml.so.1") : override;
    m_library = ::dlopen(path.constData(), RTLD_NOW | RTLD_LOCAL);
    if (!m_library) {
        m_reason = QStringLiteral("NVML not found (%1): no NVIDIA driver on this machine").arg(QString::fromLocal8Bit(path));
        return;
    }
    m_api = new Api;
    auto bind = [this](auto& function, const char* name) {
        function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(::dlsym(m_library, name));
        return function != nullptr;
    };
    const bool complete = bind(m_api->init, "nvmlInit_v2") && bind(m_api->shutdown, "nvmlShutdown") &&
                          bind(m_api->count, "nvmlDeviceGetCount_v2") && bind(m_api->handle, "nvmlDeviceGetHandleByIndex_v2") &&
                          bind(m_api->name, "nvmlDeviceGetName") && bind(m_api->memory, "nvmlDeviceGetMemoryInfo") &&
                          bind(m_api->utilization, "nvmlDeviceGetUtilizationRates") &&
                          bind(m_api->temperature, "nvmlDeviceGetTemperature");
    // Optional. _v3 and _v2 share a record layout; the unversioned name is the older, shorter one.
    if (!bind(m_api->processesV3, "nvmlDeviceGetComputeRunningProcesses_v3")) {
        bind(m_api->processesV3, "nvmlDeviceGetComputeRunningProcesses_v2");
    }
    if (!m_api->processesV3) bind(m_api->processesV1, "nvmlDeviceGetComputeRunningProcesses");
    bind(m_api->uuid, "nvmlDeviceGetUUID");                          // optional
    bind(m_api->driverVersion, "nvmlSystemGetDriverVersion");        // optional
    bind(m_api->power, "nvmlDeviceGetPowerUsage");                    // optional
    bind(m_api->clock, "nvmlDeviceGetClockInfo");                     // optional
    bind(m_api->pcieThroughput, "nvmlDeviceGetPcieThroughput");       // optional
    if (!complete || m_api->init() != kNvmlSuccess) {
        m_reason = QStringLiteral("NVML at %1 could not be initialised").arg(QString::fromLocal8Bit(path));
        delete m_api;
        m_api = nullptr;
        ::dlclose(m_library);
        m_library = nullptr;
    }
}

GpuInventory::~GpuInventory()
{
    if (m_api) {
        m_api->shutdown();
        delete m_api;
    }
    if (m_library) ::dlclose(m_library);
}

QList<GpuInfo> GpuInventory::query() const
{
    QList<GpuInfo> gpus;
    unsigned count = 0;
    if (!m_api || m_api->count(&count) != kNvmlSuccess) return gpus;
    for (unsigned i = 0; i < count; ++i) {
        NvmlDevice device = nullptr;
        if (m_api->handle(i, &device) != kNvmlSuccess) continue;
        GpuInfo info;
        info.index = static_cast<int>(i);
        char name[96] = {};
        if (m_api->name(device, name, sizeof name) == kNvmlSuccess) info.name = QString::fromUtf8(name);
        NvmlMemory memory{};
        if (m_api->memory(device, &memory) == kNvmlSuccess) {
            info.memoryUsedMiB = static_cast<qint64>(memory.used >> 20);
            info.memoryTotalMiB = static_cast<qint64>(memory.total >> 20);
        }
        NvmlUtilization utilization{};
        if (m_api->utilization(device, &utilization) == kNvmlSuccess) info.utilizationPercent = static_cast<int>(utilization.gpu);
        unsigned temperature = 0;
        if (m_api->temperature(device, kNvmlTemperatureGpu, &temperature) == kNvmlSuccess) info.temperatureC = static_cast<int>(temperature);
        if (m_api->processesV3) readProcesses(m_api->processesV3, device, &info);
        else if (m_api->processesV1) readProcesses(m_api->processesV1, device, &info);
        unsigned value = 0;
        if (m_api->power && m_api->power(device, &value) == kNvmlSuccess) info.powerW = value / 1000.0;
        if (m_api->clock && m_api->clock(device, kNvmlClockSm, &value) == kNvmlSuccess) info.smClockMHz = static_cast<int>(value);
        if (m_api->pcieThroughput && m_api->pcieThroughput(device, kNvmlPcieTxBytes, &value) == kNvmlSuccess) info.pcieTxKiBps = value;
        if (m_api->pcieThroughput && m_api->pcieThroughput(device, kNvmlPcieRxBytes, &value) == kNvmlSuccess) info.pcieRxKiBps = value;
        char uuid[96] = {};
        if (m_api->uuid && m_api->uuid(device, uuid, sizeof uuid) == kNvmlSuccess) info.uuid = QString::fromLatin1(uuid);
        gpus.append(info);
    }
    return gpus;
}

QString GpuInventory::driverVersion() const
{
    constexpr unsigned kVersionBytes = 96; // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE is 80
    char version[kVersionBytes] = {};
    if (!m_api || !m_api->driverVersion || m_api->driverVersion(version, sizeof version - 1) != kNvmlSuccess) return {};
    return QString::fromLatin1(version);
}

} // namespace ringmaster::supervisor
