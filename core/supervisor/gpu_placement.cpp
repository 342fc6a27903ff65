#include "supervisor/gpu_placement.h"

#include <QSet>
#include <QStringList>

namespace ringmaster::supervisor {
namespace {

QString describeUsable(const QList<int>& usable)
{
    QStringList names;
    for (const int gpu : usable) names << QString::number(gpu);
    return names.isEmpty() ? QStringLiteral("none") : names.join(QLatin1Char(','));
}

bool listsIndices(const QString& visible)
{
    for (const QString& entry : visible.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        bool isIndex = false;
        entry.trimmed().toInt(&isIndex);
        if (isIndex) return true;
    }
    return false;
}

bool mixedModels(const QList<GpuInfo>& inventory)
{
    for (const GpuInfo& gpu : inventory) {
        if (gpu.name != inventory.first().name) return true;
    }
    return false;
}

} // namespace

QList<int> usableGpus(const QList<GpuInfo>& inventory, int gpuCount, const QString& inherited)
{
    QList<int> usable;
    if (inherited.isNull() || inherited.trimmed() == QLatin1String("all")) {
        for (int i = 0; i < gpuCount; ++i) usable.append(i);
        return usable;
    }
    for (const QString& raw : inherited.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString entry = raw.trimmed();
        bool isIndex = false;
        const int index = entry.toInt(&isIndex);
        int found = -1;
        if (isIndex) {
            found = index >= 0 && index < gpuCount ? index : -1;
        } else {
            for (const GpuInfo& gpu : inventory) {
                if (!gpu.uuid.isEmpty() && (gpu.uuid == entry || gpu.uuid.startsWith(entry))) found = gpu.index;
            }
        }
        // CUDA stops at the first entry it cannot resolve; so do we.
        if (found < 0) break;
        if (!usable.contains(found)) usable.append(found);
    }
    return usable;
}

GpuPlacement placeGpus(const JobSpec& job, const QList<GpuInfo>& inventory, int gpuCount, const QString& inherited,
                       const QString& inheritedOrder)
{
    GpuPlacement placement;
    if (!inherited.isNull() && inheritedOrder != QLatin1String("PCI_BUS_ID") && listsIndices(inherited) && mixedModels(inventory)) {
        placement.error = QStringLiteral("the inherited CUDA_VISIBLE_DEVICES=%1 lists indices in CUDA's fastest-first order, which "
                                         "differs from the bus order on this machine of mixed GPUs: list GPU UUIDs "
                                         "(nvidia-smi -L), or set CUDA_DEVICE_ORDER=PCI_BUS_ID")
                              .arg(inherited);
        return placement;
    }
    const QList<int> usable = usableGpus(inventory, gpuCount, inherited);
    const QString within = !inherited.isNull()
                               ? QStringLiteral("usable under the inherited CUDA_VISIBLE_DEVICES=%1: %2").arg(inherited, describeUsable(usable))
                           : gpuCount == 0 ? QStringLiteral("no NVIDIA GPU found, no driver loaded")
                                           : QStringLiteral("%1 NVIDIA GPU(s) found").arg(gpuCount);
    const QString instead = usable.isEmpty() ? QStringLiteral("use --device cpu")
                                             : QStringLiteral("pick from %1, or use --device cpu").arg(describeUsable(usable));
    if (!job.gpus.isEmpty()) {
        QSet<int> seen;
        for (const int gpu : job.gpus) {
            if (seen.contains(gpu)) {
                placement.error = QStringLiteral("--gpus: GPU %1 is listed twice: each rank needs its own GPU").arg(gpu);
                return placement;
            }
            seen.insert(gpu);
        }
        for (const int gpu : job.gpus) {
            if (usable.contains(gpu)) continue;
            placement.error = gpu >= 0 && gpu < gpuCount
                                  ? QStringLiteral("--gpus: GPU %1 is not usable here (%2): %3").arg(gpu).arg(within, instead)
                                  : QStringLiteral("--gpus: GPU %1 does not exist (%2): %3").arg(gpu).arg(within, instead);
            return placement;
        }
        placement.gpus = job.gpus;
    } else {
        if (usable.isEmpty()) {
            placement.error = QStringLiteral("--device cuda: no usable NVIDIA GPU (%1): use --device cpu").arg(within);
            return placement;
        }
        if (job.nproc < 1) {
            placement.error = QStringLiteral("--nproc %1: need at least 1 GPU rank").arg(job.nproc);
            return placement;
        }
        if (job.nproc > usable.size()) {
            placement.error = QStringLiteral("--nproc %1: only %2 GPU(s) usable (%3): lower --nproc, or use --device cpu for CPU ranks")
                                  .arg(job.nproc).arg(usable.size()).arg(within);
            return placement;
        }
        placement.gpus = usable.mid(0, job.nproc);
    }
    QStringList visible;
    for (const int gpu : placement.gpus) {
        QString uuid;
        for (const GpuInfo& info : inventory) {
            if (info.index == gpu) uuid = info.uuid;
        }
        visible << (uuid.isEmpty() ? QString::number(gpu) : uuid);
    }
    placement.visibleDevices = visible.join(QLatin1Char(','));
    return placement;
}

} // namespace ringmaster::supervisor
