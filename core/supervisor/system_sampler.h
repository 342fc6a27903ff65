#pragma once
// Samples what every rank uses, every 2 s, on a thread of its own (never the GUI's): from /proc, each rank's
// process tree (process_usage.h): CPU (100 = one core), resident memory, threads, storage reads and writes; and
// through NVML (gpu_inventory.h) the rank's GPU: utilisation, memory used, power, temperature, SM clock, PCIe
// throughput each way, where NVML gives them. Each tick is a list of SystemSample rows (wall time, rank, name,
// value), emitted as `sampled` to the thread that owns the sampler: LocalRun appends them to RUN_DIR/system.csv
// (system_recorder.h) and forwards them. Rates need two readings, so a rank's first tick has no CPU or I/O rates.
// The sampler measures its own cost (its thread's CPU time against the time it ran), which the launcher's log
// reports at the end of a run. Ranks on other machines (Slurm) are not sampled: their /proc is not here.

#include <QList>
#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>

#include "protocol/run_layout.h"
#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

// The names of the sampled values are declared once, with system.csv, in core/protocol/run_layout.h.
namespace system_metric = protocol::system_metric;

struct SampledRank
{
    int rank = 0;
    qint64 pid = 0;
    int gpu = -1; // NVML index; -1 on CPU
};

class SystemSampler : public QObject
{
    Q_OBJECT

public:
    static constexpr int kDefaultIntervalMs = 2000;

    explicit SystemSampler(int intervalMs = kDefaultIntervalMs, QObject* parent = nullptr);
    ~SystemSampler() override; // stops the thread and waits for it

    // The ranks to sample from now on (a new launch's pids); empty pauses sampling. Returns at once.
    void setRanks(const QList<SampledRank>& ranks);
    // What sampling cost so far: the sampling thread's CPU seconds, and the seconds it has existed.
    double cpuSecondsUsed() const { return m_cpuMicroseconds.load() / 1e6; }
    double secondsAlive() const;
    qint64 ticks() const { return m_ticks.load(); }

Q_SIGNALS:
    // Emitted from the sampling thread; a receiver in another thread gets it queued.
    void sampled(const QList<ringmaster::supervisor::SystemSample>& samples);

private:
    class Worker;
    QThread m_thread;
    Worker* m_worker = nullptr; // lives in m_thread
    qint64 m_startedMs = 0;
    std::atomic<qint64> m_cpuMicroseconds{0};
    std::atomic<qint64> m_ticks{0};
};

} // namespace ringmaster::supervisor
