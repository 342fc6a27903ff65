#pragma once
// Which GPUs a job's ranks get, and how to tell CUDA. NVML numbers GPUs in PCI bus order, CUDA by
// default fastest-first, so every GPU rank gets CUDA_DEVICE_ORDER=PCI_BUS_ID and, where NVML reports
// them, GPU UUIDs in CUDA_VISIBLE_DEVICES (unambiguous in any order). Rank i uses the i-th listed GPU
// (cuda:LOCAL_RANK), as under torchrun.
// A CUDA_VISIBLE_DEVICES that Ringmaster inherits (a container, a Slurm allocation) is the set of
// usable GPUs: its entries (UUIDs, or indices) are respected, a selection outside it is an error,
// and without a selection the first --nproc usable GPUs are taken. Inherited indices mean NVML's
// order only under an inherited CUDA_DEVICE_ORDER=PCI_BUS_ID, or when all GPUs are the same model
// (CUDA's fastest-first order then falls back to bus order); otherwise they are ambiguous and refused.

#include <QList>
#include <QString>

#include "supervisor/gpu_inventory.h"
#include "supervisor/job_spec.h"

namespace ringmaster::supervisor {

struct GpuPlacement
{
    QList<int> gpus;          // NVML indices, rank i on gpus[i]
    QString visibleDevices;   // the CUDA_VISIBLE_DEVICES value every rank gets
    QString error;            // empty when the placement is valid
};

// `inventory`: NVML's GPUs; `gpuCount`: how many GPUs exist (inventory size, or the driver's count
// when NVML is missing); `inherited`: the launcher's own CUDA_VISIBLE_DEVICES (null when unset);
// `inheritedOrder`: the launcher's own CUDA_DEVICE_ORDER (null when unset).
GpuPlacement placeGpus(const JobSpec& job, const QList<GpuInfo>& inventory, int gpuCount, const QString& inherited,
                       const QString& inheritedOrder);
// The usable GPUs' NVML indices under an inherited CUDA_VISIBLE_DEVICES (all when it is null or "all").
QList<int> usableGpus(const QList<GpuInfo>& inventory, int gpuCount, const QString& inherited);

} // namespace ringmaster::supervisor
