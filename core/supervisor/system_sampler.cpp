#include "supervisor/system_sampler.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QHash>
#include <QTimer>

#include <algorithm>
#include <memory>

#include <ctime>

#include "supervisor/gpu_inventory.h"
#include "supervisor/process_usage.h"

namespace ringmaster::supervisor {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

qint64 threadCpuMicroseconds()
{
    timespec now{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return static_cast<qint64>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
}

} // namespace

// Owned by SystemSampler, living in its thread: the timer, NVML and the previous readings.
class SystemSampler::Worker : public QObject
{
public:
    Worker(SystemSampler* owner, int intervalMs) : m_owner(owner), m_intervalMs(intervalMs) {}

    void start()
    {
        m_clock.start();
        m_timer = new QTimer(this);
        m_timer->setInterval(m_intervalMs);
        QObject::connect(m_timer, &QTimer::timeout, this, [this] { tick(); });
    }

    void setRanks(const QList<SampledRank>& ranks)
    {
        m_ranks = ranks;
        m_previous.clear();
        if (ranks.isEmpty()) {
            m_timer->stop();
            return;
        }
        if (!m_gpus && std::any_of(ranks.cbegin(), ranks.cend(), [](const SampledRank& r) { return r.gpu >= 0; })) {
            m_gpus = std::make_unique<GpuInventory>(); // dlopen, off the GUI thread
        }
        tick(); // the first readings at once: rates from the next tick on
        m_timer->start();
    }

private:
    struct Reading
    {
        proc::ProcessUsage usage;
        qint64 atMs = 0;
    };

    void tick()
    {
        const qint64 cpuBefore = threadCpuMicroseconds();
        const double wallTime = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
        QList<qint64> pids;
        for (const SampledRank& rank : m_ranks) pids.append(rank.pid);
        const QHash<qint64, proc::ProcessUsage> usage = proc::treeUsage(pids);
        const QList<GpuInfo> gpus = m_gpus ? m_gpus->query() : QList<GpuInfo>{};
        const qint64 nowMs = m_clock.elapsed();
        QList<SystemSample> samples;
        const auto add = [&](int rank, const char* name, double value) { samples.append({wallTime, rank, QString::fromLatin1(name), value}); };
        for (const SampledRank& rank : m_ranks) {
            const auto found = usage.constFind(rank.pid);
            if (found != usage.cend()) {
                const proc::ProcessUsage& now = *found;
                if (const auto before = m_previous.constFind(rank.pid); before != m_previous.cend() && nowMs > before->atMs) {
                    const double seconds = static_cast<double>(nowMs - before->atMs) / 1000.0;
                    add(rank.rank, system_metric::kCpuPercent, std::max(0.0, now.cpuSeconds - before->usage.cpuSeconds) / seconds * 100.0);
                    add(rank.rank, system_metric::kDiskReadMiBps,
                        static_cast<double>(std::max<qint64>(0, now.readBytes - before->usage.readBytes)) / kMiB / seconds);
                    add(rank.rank, system_metric::kDiskWriteMiBps,
                        static_cast<double>(std::max<qint64>(0, now.writeBytes - before->usage.writeBytes)) / kMiB / seconds);
                }
                add(rank.rank, system_metric::kRssMiB, static_cast<double>(now.rssKiB) / 1024.0);
                add(rank.rank, system_metric::kThreads, now.threads);
                m_previous.insert(rank.pid, {now, nowMs});
            }
            for (const GpuInfo& gpu : gpus) {
                if (gpu.index != rank.gpu) continue;
                if (gpu.utilizationPercent >= 0) add(rank.rank, system_metric::kGpuUtilPercent, gpu.utilizationPercent);
                add(rank.rank, system_metric::kGpuMemoryMiB, static_cast<double>(gpu.memoryUsedMiB));
                if (gpu.powerW >= 0) add(rank.rank, system_metric::kGpuPowerW, gpu.powerW);
                if (gpu.temperatureC >= 0) add(rank.rank, system_metric::kGpuTemperatureC, gpu.temperatureC);
                if (gpu.smClockMHz >= 0) add(rank.rank, system_metric::kGpuSmClockMHz, gpu.smClockMHz);
                if (gpu.pcieTxKiBps >= 0) add(rank.rank, system_metric::kGpuPcieTxMiBps, static_cast<double>(gpu.pcieTxKiBps) / 1024.0);
                if (gpu.pcieRxKiBps >= 0) add(rank.rank, system_metric::kGpuPcieRxMiBps, static_cast<double>(gpu.pcieRxKiBps) / 1024.0);
            }
        }
        m_owner->m_ticks.fetch_add(1);
        m_owner->m_cpuMicroseconds.fetch_add(threadCpuMicroseconds() - cpuBefore);
        if (!samples.isEmpty()) Q_EMIT m_owner->sampled(samples);
    }

    SystemSampler* m_owner;
    int m_intervalMs;
    QTimer* m_timer = nullptr;
    QList<SampledRank> m_ranks;
    QHash<qint64, Reading> m_previous;
    std::unique_ptr<GpuInventory> m_gpus;
    QElapsedTimer m_clock;
};

SystemSampler::SystemSampler(int intervalMs, QObject* parent)
    : QObject(parent)
    , m_worker(new Worker(this, intervalMs))
    , m_startedMs(QDateTime::currentMSecsSinceEpoch())
{
    m_worker->moveToThread(&m_thread);
    m_thread.setObjectName(QStringLiteral("system sampler"));
    m_thread.start();
    QMetaObject::invokeMethod(m_worker, [worker = m_worker] { worker->start(); }, Qt::BlockingQueuedConnection);
}

SystemSampler::~SystemSampler()
{
    // The worker (and its timer and NVML) is deleted in its own thread, before the thread ends.
    QMetaObject::invokeMethod(m_worker, [worker = m_worker] { delete worker; }, Qt::BlockingQueuedConnection);
    m_thread.quit();
    m_thread.wait();
}

void SystemSampler::setRanks(const QList<SampledRank>& ranks)
{
    QMetaObject::invokeMethod(m_worker, [worker = m_worker, ranks] { worker->setRanks(ranks); }, Qt::QueuedConnection);
}

double SystemSampler::secondsAlive() const
{
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch() - m_startedMs) / 1000.0;
}

} // namespace ringmaster::supervisor
