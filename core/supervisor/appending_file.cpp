#include "supervisor/appending_file.h"

#include <QFile>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/safe_files.h"

namespace ringmaster::supervisor {
namespace {

QString reason(int error)
{
    return QString::fromLocal8Bit(std::strerror(error));
}

} // namespace

bool AppendingFile::open(const QString& path, QString* error)
{
    close();
    m_path = path;
    m_fd = protocol::openInRunDirectory(QFile::encodeName(path).toStdString(), O_RDWR | O_APPEND | O_CREAT, 0644);
    if (m_fd < 0) {
        const int failure = errno;
        if (error) *error = QStringLiteral("cannot open %1: %2").arg(path, reason(failure));
        return false;
    }
    struct stat info {};
    m_size = ::fstat(m_fd, &info) == 0 ? static_cast<qint64>(info.st_size) : 0;
    return true;
}

void AppendingFile::close()
{
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
}

char AppendingFile::lastByte() const
{
    char last = '\0';
    if (m_fd < 0 || m_size == 0 || ::pread(m_fd, &last, 1, m_size - 1) != 1) return '\0';
    return last;
}

QString AppendingFile::rotate()
{
    close();
    const QByteArray now = QFile::encodeName(m_path);
    const QByteArray older = now + ".1";
    ::unlink(older.constData()); // rename would replace it too, but never through a link of that name
    if (::rename(now.constData(), older.constData()) != 0) {
        const int failure = errno;
        open(m_path);
        return reason(failure);
    }
    QString error;
    return open(m_path, &error) ? QString() : error;
}

bool AppendingFile::openCsv(const QString& path, const QByteArray& header, QString* error)
{
    if (!open(path, error)) return false;
    const QByteArray start = m_size == 0 ? header + '\n' : lastByte() != '\n' ? QByteArray("\n") : QByteArray();
    if (const QString failed = append(start); !failed.isEmpty()) {
        if (error) *error = failed;
        close();
        return false;
    }
    if (error) error->clear();
    return true;
}

QString AppendingFile::append(const QByteArray& bytes)
{
    if (m_fd < 0) return QStringLiteral("not open");
    if (bytes.isEmpty()) return {};
    // The size now, not as last seen: another process may append too (two windows following one Slurm run).
    struct stat info {};
    if (::fstat(m_fd, &info) == 0) m_size = static_cast<qint64>(info.st_size);
    if (m_rotateAt > 0 && m_size > 0 && m_size + bytes.size() > m_rotateAt) {
        if (const QString failed = rotate(); !failed.isEmpty() && m_fd < 0) return failed;
    }
    qsizetype done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::write(m_fd, bytes.constData() + done, static_cast<size_t>(bytes.size() - done));
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
            const int failure = wrote == 0 ? ENOSPC : errno;
            // Nothing half-written stays: cut back to where this append began.
            if (done > 0 && ::ftruncate(m_fd, m_size) != 0) m_size += done;
            return reason(failure);
        }
        done += wrote;
    }
    m_size += bytes.size();
    return {};
}

} // namespace ringmaster::supervisor
