#pragma once
// The machine's NVIDIA GPUs through NVML, loaded at run time (dlopen "libnvidia-ml.so.1", or the file
// named by RINGMASTER_NVML_LIBRARY), so Ringmaster runs on machines without NVIDIA drivers: there the
// list is empty. Only the handful of NVML entry points below are used; power, clocks and PCIe throughput are
// optional (an NVML without them, or a GPU that does not report them, leaves them at -1).

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
    // Where NVML gives them (-1 otherwise): board power, the streaming multiprocessors' clock, and PCIe
    // throughput over NVML's last 20 ms window.
    double powerW = -1;
    int smClockMHz = -1;
    qint64 pcieTxKiBps = -1;
    qint64 pcieRxKiBps = -1;
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
