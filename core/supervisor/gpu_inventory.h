#pragma once
// The machine's NVIDIA GPUs through NVML, loaded at run time (dlopen "libnvidia-ml.so.1", or the file
// named by RINGMASTER_NVML_LIBRARY), so Ringmaster runs on machines without NVIDIA drivers: there the
// list is empty. Only the handful of NVML entry points below are used.

#include <QList>
#include <QString>

namespace ringmaster::supervisor {

struct GpuInfo
{
    int index = 0;
    QString name;
    qint64 memoryUsedMiB = 0;
    qint64 memoryTotalMiB = 0;
    int utilizationPercent = -1;
    int temperatureC = -1;
    int otherProcesses = 0;     // compute processes on it (see processPids)
    QList<qint64> processPids;  // their pids, where NVML lists them (a front end excludes its own ranks)
    QString uuid;               // "GPU-…", empty when NVML does not say
};

class GpuInventory
{
public:
    GpuInventory();
    ~GpuInventory();
    GpuInventory(const GpuInventory&) = delete;
    GpuInventory& operator=(const GpuInventory&) = delete;

    bool available() const { return m_library != nullptr; }
    // Why there is no NVML (library missing, init failed), for the UI.
    QString unavailableReason() const { return m_reason; }
    QList<GpuInfo> query() const;
    // The NVIDIA driver's version ("550.54.15"), empty without NVML or when it does not say.
    QString driverVersion() const;

private:
    struct Api;
    void* m_library = nullptr;
    Api* m_api = nullptr;
    QString m_reason;
};

} // namespace ringmaster::supervisor
