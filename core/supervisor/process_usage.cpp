#include "supervisor/process_usage.h"

#include "supervisor/proc_info.h"

#include <QByteArray>
#include <QDir>
#include <QFile>

#include <unistd.h>

namespace ringmaster::supervisor::proc {
namespace {

constexpr int kMaxDepth = 64;

struct ProcessRecord
{
    qint64 parent = 0;
    double cpuSeconds = 0.0;
    qint64 rssKiB = 0;
    int threads = 0;
};

bool readRecord(qint64 pid, ProcessRecord* record)
{
    const QList<QByteArray> fields = statFields(pid);
    if (fields.size() < 22) return false;
    static const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
    static const qint64 pageKiB = ::sysconf(_SC_PAGESIZE) / 1024;
    record->parent = fields.at(1).toLongLong();
    record->cpuSeconds = static_cast<double>(fields.at(11).toLongLong() + fields.at(12).toLongLong()) / ticks;
    record->threads = fields.at(17).toInt();
    record->rssKiB = fields.at(21).toLongLong() * pageKiB;
    return true;
}

void addIo(qint64 pid, ProcessUsage* usage)
{
    QFile file(QStringLiteral("/proc/%1/io").arg(pid));
    if (!file.open(QIODevice::ReadOnly)) return; // another user's process: no I/O counters
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.startsWith("read_bytes:")) usage->readBytes += line.mid(11).trimmed().toLongLong();
        else if (line.startsWith("write_bytes:")) usage->writeBytes += line.mid(12).trimmed().toLongLong();
    }
}

// The children of every thread of PID (/proc/PID/task/TID/children, which a kernel with CONFIG_PROC_CHILDREN has);
// false when the kernel has no such files.
bool childrenOf(qint64 pid, QList<qint64>* children)
{
    const QString tasks = QStringLiteral("/proc/%1/task").arg(pid);
    const QStringList threads = QDir(tasks).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    bool supported = threads.isEmpty(); // a process gone meanwhile says nothing about the kernel
    for (const QString& thread : threads) {
        QFile file(tasks + QLatin1Char('/') + thread + QStringLiteral("/children"));
        if (!file.open(QIODevice::ReadOnly)) continue;
        supported = true;
        for (const QByteArray& child : file.readAll().split(' ')) {
            if (const qint64 childPid = child.trimmed().toLongLong(); childPid > 0) children->append(childPid);
        }
    }
    return supported;
}

void add(const ProcessRecord& record, qint64 pid, ProcessUsage* sum)
{
    sum->cpuSeconds += record.cpuSeconds;
    sum->rssKiB += record.rssKiB;
    sum->threads += record.threads;
    ++sum->processes;
    addIo(pid, sum);
}

// Walks each root's tree through the children files: the cost is the trees', not the machine's. False when the
// kernel has no children files (then every process's parent is read instead).
bool walkTrees(const QList<qint64>& roots, QHash<qint64, ProcessUsage>* usage)
{
    for (const qint64 root : roots) {
        QList<qint64> pending{root};
        ProcessUsage sum;
        int visited = 0;
        while (!pending.isEmpty() && visited++ < 100000) {
            const qint64 pid = pending.takeLast();
            ProcessRecord record;
            if (!readRecord(pid, &record)) continue; // gone meanwhile
            if (!childrenOf(pid, &pending)) return false;
            add(record, pid, &sum);
        }
        if (sum.processes > 0) usage->insert(root, sum);
    }
    return true;
}

} // namespace

QHash<qint64, ProcessUsage> treeUsage(const QList<qint64>& roots, TreeWalk walk)
{
    QHash<qint64, ProcessUsage> usage;
    if (roots.isEmpty()) return usage;
    if (walk == TreeWalk::Children && walkTrees(roots, &usage)) return usage;
    usage.clear();
    QHash<qint64, ProcessRecord> records;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString& entry : entries) {
        bool number = false;
        const qint64 pid = entry.toLongLong(&number);
        ProcessRecord record;
        if (number && readRecord(pid, &record)) records.insert(pid, record);
    }
    for (auto it = records.cbegin(); it != records.cend(); ++it) {
        // The root this process descends from, if any (a rank never descends from another rank).
        qint64 root = 0;
        qint64 pid = it.key();
        for (int depth = 0; depth < kMaxDepth && pid > 1; ++depth) {
            if (roots.contains(pid)) {
                root = pid;
                break;
            }
            const auto parent = records.constFind(pid);
            if (parent == records.cend()) break;
            pid = parent->parent;
        }
        if (root == 0) continue;
        add(*it, it.key(), &usage[root]);
    }
    return usage;
}

} // namespace ringmaster::supervisor::proc
