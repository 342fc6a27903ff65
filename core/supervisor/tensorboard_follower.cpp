#include "supervisor/tensorboard_follower.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QStringList>
#include <QThread>
#include <QtConcurrent>

#include <atomic>

#include <algorithm>

#include "protocol/tensorboard_records.h"

namespace tb = ringmaster::protocol::tensorboard;

namespace ringmaster::supervisor {

TensorBoardFollower::TensorBoardFollower(QString folder, QObject* parent, int pollIntervalMs)
    : QObject(parent), m_folder(std::move(folder))
{
    m_timer.setInterval(pollIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &TensorBoardFollower::pollInBackground);
    connect(&m_background, &QFutureWatcher<Poll>::finished, this, [this] {
        if (!m_backgroundPending) return; // pollNow() took its result already
        m_backgroundPending = false;
        apply(m_background.result());
    });
}

namespace {

QStringList eventFilesUnder(const QString& folder, const QString& ignored = {})
{
    const QStringList patterns{QString::fromLatin1(tb::kEventFilePrefix) + QLatin1Char('*')};
    QDirIterator found(folder, patterns, QDir::Files, QDirIterator::Subdirectories);
    QStringList paths;
    while (found.hasNext()) {
        const QString path = found.next();
        if (ignored.isEmpty() || !QFileInfo(path).absoluteFilePath().startsWith(ignored)) paths.append(path);
    }
    paths.sort(); // same-folder files in name order: the name starts with the creation time
    return paths;
}

} // namespace

int TensorBoardFollower::skipFilesPresentNow()
{
    const QStringList paths = eventFilesUnder(m_folder);
    for (const QString& path : paths) m_files[path].earlier = true;
    return static_cast<int>(paths.size());
}

void TensorBoardFollower::ignoreFolder(const QString& folder)
{
    m_ignored = QDir(QFileInfo(folder).absoluteFilePath()).path() + QLatin1Char('/');
}

void TensorBoardFollower::start()
{
    pollNow();
    m_timer.start();
}

void TensorBoardFollower::stop() { m_timer.stop(); }

void TensorBoardFollower::pollNow()
{
    if (m_backgroundPending) {
        // Its result first (states and scalars in order), then this poll.
        m_background.waitForFinished();
        m_backgroundPending = false;
        apply(m_background.result());
    }
    apply(poll(m_folder, m_files, m_ignored));
}

void TensorBoardFollower::pollInBackground()
{
    if (m_backgroundPending) return;
    m_backgroundPending = true;
    m_background.setFuture(QtConcurrent::run([folder = m_folder, files = m_files, ignored = m_ignored] { return poll(folder, files, ignored); }));
}

void TensorBoardFollower::apply(const Poll& result)
{
    m_files = result.files;
    for (const QString& message : result.warnings) Q_EMIT warning(message);
    for (const Found& found : result.scalars) Q_EMIT scalar(found.step, found.tag, found.value, found.wallTime);
}

namespace {

void readNew(const QString& path, TensorBoardFollower::FileState& state, TensorBoardFollower::Poll* out)
{
    using FileState = TensorBoardFollower::FileState;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return; // gone or not readable yet: the next poll tries again
    const qint64 size = file.size();
    if (size < state.offset) {
        out->warnings.append(QStringLiteral("TensorBoard file %1 shrank from %2 to %3 bytes: reading it again from the start")
                           .arg(path)
                           .arg(state.offset)
                           .arg(size));
        state = FileState{};
    }
    if (size == state.offset || !file.seek(state.offset)) return;
    const QByteArray bytes = file.read(std::min(size - state.offset, TensorBoardFollower::kMaxBytesPerPoll));
    tb::ScanResult scan =
        tb::scanEvents(std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())), [&](const tb::Event& event) {
            for (const auto& value : event.scalars) {
                out->scalars.append({event.step, QString::fromStdString(value.tag), value.value, event.wallTime});
            }
        });
    state.offset += static_cast<qint64>(scan.consumed);
    if (scan.pendingSkipBytes > 0 && static_cast<quint64>(size - state.offset) >= scan.pendingSkipBytes) {
        state.offset += static_cast<qint64>(scan.pendingSkipBytes); // an oversized record, now complete: step over it
        ++scan.oversizedRecords;
    }
    if (scan.badDataRecords > 0 && !state.warnedBadData) {
        state.warnedBadData = true;
        out->warnings.append(QStringLiteral("TensorBoard file %1: a record failed its data checksum and was skipped "
                                      "(further damaged records in this file are skipped without a warning)")
                           .arg(path));
    }
    if (scan.undecodableRecords > 0 && !state.warnedUndecodable) {
        state.warnedUndecodable = true;
        out->warnings.append(QStringLiteral("TensorBoard file %1: a record with sound checksums is not a TensorBoard event "
                                      "and was skipped")
                           .arg(path));
    }
    if (scan.oversizedRecords > 0 && !state.warnedOversized) {
        state.warnedOversized = true;
        out->warnings.append(QStringLiteral("TensorBoard file %1: a record over %2 MiB was skipped unread")
                           .arg(path)
                           .arg(tb::kMaxRecordDataBytes / (1024 * 1024)));
    }
    if (scan.framingLost) {
        state.abandoned = true;
        out->warnings.append(QStringLiteral("TensorBoard file %1: the record at byte %2 failed its length checksum, so the "
                                      "records after it cannot be found; the rest of this file is ignored")
                           .arg(path)
                           .arg(state.offset));
    }
}

} // namespace

namespace {
std::atomic_int g_pollDelayMs{0};
} // namespace

void TensorBoardFollower::setPollDelayForTests(int milliseconds)
{
    g_pollDelayMs.store(milliseconds);
}

TensorBoardFollower::Poll TensorBoardFollower::poll(const QString& folder, QHash<QString, FileState> files, const QString& ignored)
{
    if (const int delay = g_pollDelayMs.load(); delay > 0) QThread::msleep(static_cast<unsigned long>(delay));
    Poll result;
    for (const QString& path : eventFilesUnder(folder, ignored)) {
        FileState& state = files[path];
        if (!state.abandoned && !state.earlier) readNew(path, state, &result);
    }
    result.files = std::move(files);
    return result;
}

} // namespace ringmaster::supervisor
