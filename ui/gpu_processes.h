#pragma once
// The pids of the compute processes on each NVIDIA GPU, through NVML loaded at run time (the library
// GpuInventory uses: libnvidia-ml.so.1 or RINGMASTER_NVML_LIBRARY). GpuInventory only counts them;
// the GPU panel needs the pids to tell this app's own ranks from other users of a GPU.

#include <QHash>
#include <QList>

namespace ringmaster::ui {

class GpuProcesses
{
public:
    GpuProcesses();
    ~GpuProcesses();
    GpuProcesses(const GpuProcesses&) = delete;
    GpuProcesses& operator=(const GpuProcesses&) = delete;

    // False without NVML or without a process query: then callers fall back to the counts.
    bool available() const { return m_api != nullptr; }
    // GPU index -> pids of the compute processes on it (GPUs without any are absent).
    QHash<int, QList<qint64>> query() const;

private:
    struct Api;
    void* m_library = nullptr;
    Api* m_api = nullptr;
};

} // namespace ringmaster::ui
