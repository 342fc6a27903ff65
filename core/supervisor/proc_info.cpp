#include "supervisor/proc_info.h"

#include <QByteArray>
#include <QDir>
#include <QFile>
#include <QList>

#include <csignal>
#include <sys/syscall.h>
#include <unistd.h>

namespace ringmaster::supervisor::proc {
namespace {

constexpr int kMaxAncestry = 64;

} // namespace

QList<QByteArray> statFields(qint64 pid)
{
    QFile file(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!file.open(QIODevice::ReadOnly)) return {};
    const QByteArray text = file.readAll();
    const qsizetype close = text.lastIndexOf(')');
    if (close < 0) return {};
    return text.mid(close + 2).split(' ');
}

QChar state(qint64 pid)
{
    const auto fields = statFields(pid);
    return fields.isEmpty() || fields.first().isEmpty() ? QLatin1Char('?') : QLatin1Char(fields.first().at(0));
}

qint64 parentPid(qint64 pid)
{
    const auto fields = statFields(pid);
    return fields.size() > 1 ? fields.at(1).toLongLong() : 0;
}

bool isSelfOrDescendant(qint64 pid, qint64 ancestor)
{
    if (ancestor <= 0) return false;
    for (int depth = 0; pid > 1 && depth < kMaxAncestry; ++depth) {
        if (pid == ancestor) return true;
        pid = parentPid(pid);
    }
    return false;
}

qint64 peakRssKiB(qint64 pid)
{
    QFile file(QStringLiteral("/proc/%1/status").arg(pid));
    if (!file.open(QIODevice::ReadOnly)) return -1;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.startsWith("VmHWM:")) return line.mid(6).trimmed().split(' ').first().toLongLong();
    }
    return -1;
}

namespace {

bool environmentHolds(qint64 pid, const QByteArray& nameEqualsValue)
{
    QFile environ(QStringLiteral("/proc/%1/environ").arg(pid));
    if (!environ.open(QIODevice::ReadOnly)) return false; // another user's, or gone
    for (const QByteArray& variable : environ.readAll().split('\0')) {
        if (variable == nameEqualsValue) return true;
    }
    return false;
}

} // namespace

bool killIfStillHolds(qint64 pid, const QByteArray& nameEqualsValue)
{
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
    if (fd < 0) return false;
    const bool signalled = environmentHolds(pid, nameEqualsValue) && ::syscall(SYS_pidfd_send_signal, fd, SIGKILL, nullptr, 0) == 0;
    ::close(fd);
    return signalled;
}

QList<qint64> processesWithEnvironment(const QByteArray& nameEqualsValue)
{
    QList<qint64> found;
    const qint64 self = ::getpid();
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString& entry : entries) {
        bool number = false;
        const qint64 pid = entry.toLongLong(&number);
        if (!number || pid == self) continue;
        if (environmentHolds(pid, nameEqualsValue) && state(pid) != QLatin1Char('Z') && state(pid) != QLatin1Char('?')) found.append(pid);
    }
    return found;
}

QString commandName(qint64 pid)
{
    QFile file(QStringLiteral("/proc/%1/comm").arg(pid));
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()).trimmed() : QString();
}

} // namespace ringmaster::supervisor::proc
