#include "runs/run_liveness.h"

#include "protocol/run_lock.h"
#include "protocol/wire.h"

#include <QFile>

#include <sys/stat.h>

namespace ringmaster::runs {
namespace {

// Modification time in nanoseconds, or -1 when the file is missing.
qint64 mtimeNs(const QString& path)
{
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0) return -1;
    return static_cast<qint64>(info.st_mtim.tv_sec) * 1000000000LL + info.st_mtim.tv_nsec;
}

bool isFinalStatus(const QString& status)
{
    return status == QLatin1String(protocol::kStatusCompleted) || status == QLatin1String(protocol::kStatusFailed) ||
           status == QLatin1String(protocol::kStatusStopped);
}

} // namespace

void applyRunLiveness(RunRecord* record)
{
    const QByteArray dir = QFile::encodeName(record->path);
    const protocol::RunLockState lock = protocol::probeRunLock(dir.toStdString());
    if (lock == protocol::RunLockState::NoLockFile) return;
    // The last start's final status: written after the lock was taken (an earlier segment's is older). The
    // supervisor lets go of the lock just after writing it, so a held lock with such a status is a run ending.
    const qint64 locked = mtimeNs(record->path + QLatin1Char('/') + QLatin1String(protocol::kRunLockFile));
    const qint64 summary = mtimeNs(record->path + QLatin1Char('/') + QLatin1String(protocol::kSummaryFile));
    if (isFinalStatus(record->status) && summary > locked) return;
    record->status = QString::fromLatin1(lock == protocol::RunLockState::Held ? kStatusRunning : kStatusInterrupted);
}

} // namespace ringmaster::runs
