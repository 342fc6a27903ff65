#include "tensorboard_follower.h"

#include <QDirIterator>
#include <QFile>
#include <QStringList>

#include <algorithm>

#include "../protocol/tensorboard_records.h"

namespace tb = ringmaster::protocol::tensorboard;

namespace ringmaster::supervisor {

TensorBoardFollower::TensorBoardFollower(QString folder, QObject* parent, int pollIntervalMs)
    : QObject(parent), m_folder(std::move(folder))
{
    m_timer.setInterval(pollIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &TensorBoardFollower::pollNow);
}

void TensorBoardFollower::start()
{
    pollNow();
    m_timer.start();
}

void TensorBoardFollower::stop() { m_timer.stop(); }

void TensorBoardFollower::pollNow()
{
    const QStringList patterns{QString::fromLatin1(tb::kEventFilePrefix) + QLatin1Char('*')};
    QDirIterator files(m_folder, patterns, QDir::Files, QDirIterator::Subdirectories);
    QStringList paths;
    while (files.hasNext()) paths.append(files.next());
    paths.sort(); // same-folder files in name order: the name starts with the creation time
    for (const QString& path : paths) {
        FileState& state = m_files[path];
        if (!state.abandoned) readNew(path, state);
    }
}

void TensorBoardFollower::readNew(const QString& path, FileState& state)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return; // gone or not readable yet: the next poll tries again
    const qint64 size = file.size();
    if (size < state.offset) {
        Q_EMIT warning(QStringLiteral("TensorBoard file %1 shrank from %2 to %3 bytes: reading it again from the start")
                           .arg(path)
                           .arg(state.offset)
                           .arg(size));
        state = FileState{};
    }
    if (size == state.offset || !file.seek(state.offset)) return;
    const QByteArray bytes = file.read(std::min(size - state.offset, kMaxBytesPerPoll));
    tb::ScanResult scan =
        tb::scanEvents(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), [&](const tb::Event& event) {
            for (const auto& value : event.scalars) {
                Q_EMIT scalar(event.step, QString::fromStdString(value.tag), value.value, event.wallTime);
            }
        });
    state.offset += static_cast<qint64>(scan.consumed);
    if (scan.pendingSkipBytes > 0 && static_cast<quint64>(size - state.offset) >= scan.pendingSkipBytes) {
        state.offset += static_cast<qint64>(scan.pendingSkipBytes); // an oversized record, now complete: step over it
        ++scan.oversizedRecords;
    }
    if (scan.badDataRecords > 0 && !state.warnedBadData) {
        state.warnedBadData = true;
        Q_EMIT warning(QStringLiteral("TensorBoard file %1: a record failed its data checksum and was skipped "
                                      "(further damaged records in this file are skipped without a warning)")
                           .arg(path));
    }
    if (scan.undecodableRecords > 0 && !state.warnedUndecodable) {
        state.warnedUndecodable = true;
        Q_EMIT warning(QStringLiteral("TensorBoard file %1: a record with sound checksums is not a TensorBoard event "
                                      "and was skipped")
                           .arg(path));
    }
    if (scan.oversizedRecords > 0 && !state.warnedOversized) {
        state.warnedOversized = true;
        Q_EMIT warning(QStringLiteral("TensorBoard file %1: a record over %2 MiB was skipped unread")
                           .arg(path)
                           .arg(tb::kMaxRecordDataBytes / (1024 * 1024)));
    }
    if (scan.framingLost) {
        state.abandoned = true;
        Q_EMIT warning(QStringLiteral("TensorBoard file %1: the record at byte %2 failed its length checksum, so the "
                                      "records after it cannot be found; the rest of this file is ignored")
                           .arg(path)
                           .arg(state.offset));
    }
}

} // namespace ringmaster::supervisor
