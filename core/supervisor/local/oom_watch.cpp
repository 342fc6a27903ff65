#include "supervisor/local/oom_watch.h"

#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

#include <ctime>

#include <fcntl.h>
#include <unistd.h>

namespace ringmaster::supervisor {
namespace {

constexpr qint64 kMaxKernelLogBytes = 4 * 1024 * 1024;
constexpr qint64 kClockSlackUsec = 1000000; // the kernel's clock and ours may differ a little

// The file that counts OOM kills in the memory cgroup of `pid`, from /proc/PID/cgroup.
QString oomCountFile(qint64 pid)
{
    QFile file(QStringLiteral("/proc/%1/cgroup").arg(pid));
    if (!file.open(QIODevice::ReadOnly)) return {};
    for (const QByteArray& line : file.readAll().split('\n')) {
        const QList<QByteArray> parts = line.split(':');
        if (parts.size() < 3) continue;
        const QString path = QString::fromUtf8(line.mid(parts.at(0).size() + parts.at(1).size() + 2));
        if (parts.at(1).split(',').contains("memory")) {
            const QString v1 = QStringLiteral("/sys/fs/cgroup/memory") + path + QStringLiteral("/memory.oom_control");
            if (QFileInfo::exists(v1)) return v1;
        } else if (parts.at(0) == "0" && parts.at(1).isEmpty()) {
            for (const QString& root : {QStringLiteral("/sys/fs/cgroup"), QStringLiteral("/sys/fs/cgroup/unified")}) {
                const QString v2 = root + path + QStringLiteral("/memory.events");
                if (QFileInfo::exists(v2)) return v2;
            }
        }
    }
    return {};
}

qint64 oomKillCount(const QString& countFile)
{
    QFile file(countFile);
    if (countFile.isEmpty() || !file.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.startsWith("oom_kill ")) return line.mid(9).trimmed().toLongLong();
    }
    return -1;
}

qint64 monotonicUsec()
{
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return static_cast<qint64>(now.tv_sec) * 1000000 + now.tv_nsec / 1000;
}

// /dev/kmsg yields one record per read() ("PRIORITY,SEQUENCE,USEC,FLAGS;TEXT"); non-blocking, it ends
// with EAGAIN at the newest record. Records older than `sinceUsec` may name an earlier owner of the pid.
bool kernelLogNamesOomVictim(qint64 pid, qint64 sinceUsec)
{
    const int fd = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    const QRegularExpression victim(QStringLiteral("(Killed process %1 \\(|oom-kill:.*[ ,]pid=%1[ ,])").arg(pid));
    char record[8192];
    qint64 total = 0;
    bool found = false;
    for (ssize_t n; !found && total < kMaxKernelLogBytes && (n = ::read(fd, record, sizeof record)) != 0;) {
        if (n < 0) {
            if (errno == EPIPE) continue; // a record was overwritten while we read: go on
            break;                        // EAGAIN: no more records
        }
        total += n;
        const QByteArray text(record, static_cast<qsizetype>(n));
        const QList<QByteArray> header = text.left(text.indexOf(';')).split(',');
        if (header.size() < 3 || header.at(2).toLongLong() < sinceUsec) continue;
        found = victim.match(QString::fromUtf8(text)).hasMatch();
    }
    ::close(fd);
    return found;
}

} // namespace

void OomWatch::track(qint64 pid)
{
    Tracked tracked;
    tracked.countFile = oomCountFile(pid);
    if (tracked.countFile.isEmpty()) return; // gone already, or no memory cgroup: keep what we knew
    const auto known = m_tracked.constFind(pid);
    if (known != m_tracked.constEnd() && known->countFile == tracked.countFile) return;
    tracked.sinceUsec = known != m_tracked.constEnd() ? known->sinceUsec : monotonicUsec() - kClockSlackUsec;
    tracked.countAtStart = oomKillCount(tracked.countFile);
    m_tracked.insert(pid, tracked);
}

OomWatch::Evidence OomWatch::oomEvidence(qint64 pid) const
{
    const auto it = m_tracked.constFind(pid);
    if (it == m_tracked.constEnd()) return Evidence::None;
    if (kernelLogNamesOomVictim(pid, it->sinceUsec)) return Evidence::KernelLogNamesIt;
    if (it->countAtStart >= 0 && oomKillCount(it->countFile) > it->countAtStart) return Evidence::CgroupCountRose;
    return Evidence::None;
}

} // namespace ringmaster::supervisor
