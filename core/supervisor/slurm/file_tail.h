#pragma once
// Follows a text file that another process appends to (a rank's log that srun writes, metrics.csv that
// rank 0 writes, the batch script's output), by polling: each poll() returns the complete lines added
// since the last one and keeps a partial last line for later. A file that does not exist yet is not an
// error (it is read from its start once it appears); a file that shrank (truncated, or written again
// from the start) is read again from its start. Bounded: at most kMaxBytesPerPoll are read per poll,
// so a huge log cannot freeze the caller; the rest comes at the next poll.

#include <QString>
#include <QStringList>

namespace ringmaster::supervisor {

class FileTail
{
public:
    static constexpr qint64 kMaxBytesPerPoll = 4 * 1024 * 1024;

    FileTail() = default;
    explicit FileTail(QString path) : m_path(std::move(path)) {}

    const QString& path() const { return m_path; }
    // The complete lines appended since the last poll (without their '\n').
    QStringList poll();
    // Skips what the file holds now: the next poll returns only what is appended after this call.
    void skipToEnd();
    qint64 offset() const { return m_offset; }

private:
    QString m_path;
    qint64 m_offset = 0;
    QByteArray m_partial;
};

} // namespace ringmaster::supervisor
