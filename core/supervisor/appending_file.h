#pragma once
// A file in a run directory that the supervisor appends to: a rank's log, the launcher's log, scalars.csv.
// Opened with O_NOFOLLOW (a link planted in a run folder is never followed: protocol/safe_files.h). Each
// append is all or nothing: a write the disk cannot take whole (a full disk mid-row) is cut back to where it
// began, so no half row or half line is left; the caller gets the system's reason and says it once.
// A log may rotate: once it would pass its limit, NAME becomes NAME.1 (replacing an older NAME.1) and a new
// NAME begins, so a week-long run keeps at most twice the limit per log and the newest lines whole.

#include <QByteArray>
#include <QString>

namespace ringmaster::supervisor {

// rank-N.log and launcher.log rotate at this size.
inline constexpr qint64 kLogRotateBytes = 64LL * 1024 * 1024;

class AppendingFile
{
public:
    AppendingFile() = default;
    ~AppendingFile() { close(); }
    AppendingFile(const AppendingFile&) = delete;
    AppendingFile& operator=(const AppendingFile&) = delete;

    // Opens PATH for appending, creating it (0644); false with *error ("cannot open PATH: reason").
    bool open(const QString& path, QString* error = nullptr);
    void close();
    bool isOpen() const { return m_fd >= 0; }
    QString path() const { return m_path; }
    qint64 size() const { return m_size; }
    // 0 (the default): never rotate.
    void setRotation(qint64 limitBytes) { m_rotateAt = limitBytes; }
    // The file's last byte, or '\0' when it is empty or unreadable.
    char lastByte() const;

    // Appends all of BYTES or nothing. Empty when written; else the system's reason ("No space left on device").
    QString append(const QByteArray& bytes);
    // Opens a CSV file that rows are appended to (scalars.csv, system.csv): HEADER and a newline when it is new or
    // empty, a newline when its last row was cut short (a kill mid-write), so the next row never joins that one.
    // False with *error set (and the file closed) when it cannot be opened or started.
    bool openCsv(const QString& path, const QByteArray& header, QString* error);

private:
    QString rotate();

    int m_fd = -1;
    QString m_path;
    qint64 m_size = 0;
    qint64 m_rotateAt = 0;
};

} // namespace ringmaster::supervisor
