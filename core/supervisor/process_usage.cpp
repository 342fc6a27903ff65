#include "process_usage.h"

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

bool readRecord(const QString& pid, ProcessRecord* record)
{
    QFile file(QStringLiteral("/proc/") + pid + QStringLiteral("/stat"));
    if (!file.open(QIODevice::ReadOnly)) return false;
    const QByteArray text = file.readAll();
    const qsizetype close = text.lastIndexOf(')');
    if (close < 0) return false;
    // After "(comm) ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime ...
    const QList<QByteArray> fields = text.mid(close + 2).split(' ');
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

} // namespace

QHash<qint64, ProcessUsage> treeUsage(const QList<qint64>& roots)
{
    QHash<qint64, ProcessUsage> usage;
    if (roots.isEmpty()) return usage;
    QHash<qint64, ProcessRecord> records;
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString& entry : entries) {
        bool number = false;
        const qint64 pid = entry.toLongLong(&number);
        ProcessRecord record;
        if (number && readRecord(entry, &record)) records.insert(pid, record);
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
        ProcessUsage& sum = usage[root];
        sum.cpuSeconds += it->cpuSeconds;
        sum.rssKiB += it->rssKiB;
        sum.threads += it->threads;
        ++sum.processes;
        addIo(it.key(), &sum);
    }
    return usage;
}

} // namespace ringmaster::supervisor::proc
