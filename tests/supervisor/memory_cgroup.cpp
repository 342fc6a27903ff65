#include "memory_cgroup.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QThread>

#include <unistd.h>

namespace ringmaster::supervisor::test {
namespace {

bool writeText(const QString& path, const QByteArray& text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size() && file.flush();
}

} // namespace

QString MemoryCgroup::create(qint64 limitBytes)
{
    if (::geteuid() != 0) return QStringLiteral("needs root to create a memory cgroup");
    QFile own(QStringLiteral("/proc/self/cgroup"));
    if (!own.open(QIODevice::ReadOnly)) return QStringLiteral("cannot read /proc/self/cgroup");
    QString limitFile;
    for (const QByteArray& line : own.readAll().split('\n')) {
        const QList<QByteArray> parts = line.split(':');
        if (parts.size() < 3) continue;
        const QString path = QString::fromUtf8(line.mid(parts.at(0).size() + parts.at(1).size() + 2));
        if (parts.at(1).split(',').contains("memory")) {
            m_parent = QStringLiteral("/sys/fs/cgroup/memory") + path;
            limitFile = QStringLiteral("memory.limit_in_bytes");
        } else if (parts.at(0) == "0" && parts.at(1).isEmpty() && m_parent.isEmpty() &&
                   QFileInfo::exists(QStringLiteral("/sys/fs/cgroup") + path + QStringLiteral("/memory.max"))) {
            m_parent = QStringLiteral("/sys/fs/cgroup") + path;
            limitFile = QStringLiteral("memory.max");
        }
    }
    if (m_parent.isEmpty()) return QStringLiteral("no memory cgroup controller is mounted");
    const QString path = m_parent + QStringLiteral("/ringmaster-test-%1").arg(::getpid());
    if (!QDir().mkdir(path)) return QStringLiteral("cannot create %1").arg(path);
    m_path = path;
    if (!writeText(m_path + QLatin1Char('/') + limitFile, QByteArray::number(limitBytes))) {
        return QStringLiteral("cannot set %1 in %2").arg(limitFile, m_path);
    }
    writeText(m_path + QStringLiteral("/memory.swap.max"), "0");             // v2: no swap to hide in
    writeText(m_path + QStringLiteral("/memory.memsw.limit_in_bytes"), QByteArray::number(limitBytes)); // v1, where enabled
    return {};
}

bool MemoryCgroup::add(qint64 pid)
{
    return !m_path.isEmpty() && writeText(m_path + QStringLiteral("/cgroup.procs"), QByteArray::number(pid));
}

MemoryCgroup::~MemoryCgroup()
{
    if (m_path.isEmpty()) return;
    // Its processes are dead by now (or are moved back), then the folder can go.
    QFile procs(m_path + QStringLiteral("/cgroup.procs"));
    if (procs.open(QIODevice::ReadOnly)) {
        for (const QByteArray& pid : procs.readAll().split('\n')) {
            if (!pid.isEmpty()) writeText(m_parent + QStringLiteral("/cgroup.procs"), pid);
        }
    }
    for (int attempt = 0; attempt < 50 && !QDir().rmdir(m_path); ++attempt) QThread::msleep(100);
}

} // namespace ringmaster::supervisor::test
