#include "ui/runs/runs_folder_watch.h"

#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QtConcurrent>

#include <sys/stat.h>

#include "runs/run_files.h"
#include "protocol/run_lock.h"
#include "runs/run_notes.h"
#include "runs/slurm_job.h"

namespace ringmaster::ui {
namespace {

// The files whose replacement (a new inode, a new time) means the run changed without its entries changing.
const char* const kReplacedWhole[] = {runs::kJobFile, runs::kSummaryFile, runs::kNotesFile};

void appendStamp(QByteArray* signature, const QString& path)
{
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0) return;
    *signature += '@' + QByteArray::number(static_cast<qulonglong>(info.st_ino)) + ':' +
                  QByteArray::number(static_cast<qlonglong>(info.st_mtim.tv_sec)) + '.' +
                  QByteArray::number(static_cast<qlonglong>(info.st_mtim.tv_nsec)) + ':' +
                  QByteArray::number(static_cast<qlonglong>(info.st_size));
}

} // namespace

RunsFolderWatch::RunsFolderWatch(QObject* parent)
    : QObject(parent)
    , m_watcher(new QFileSystemWatcher(this))
{
    m_settle.setSingleShot(true);
    m_settle.setInterval(kSettleMs);
    connect(&m_settle, &QTimer::timeout, this, &RunsFolderWatch::startCheck);
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, &RunsFolderWatch::onDirectoryChanged);
    connect(&m_poll, &QTimer::timeout, this, &RunsFolderWatch::checkAll);
    connect(&m_check, &QFutureWatcher<bool>::finished, this, &RunsFolderWatch::onChecked);
}

RunsFolderWatch::~RunsFolderWatch()
{
    m_check.waitForFinished();
}

QByteArray RunsFolderWatch::signature(const QString& folder)
{
    const QDir dir(folder);
    if (!dir.exists()) return {};
    QByteArray signature = "dir";
    // Visible entries only: the listing's own index files (and their temporary names) are hidden.
    const QStringList names = dir.entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System, QDir::Name);
    for (const QString& name : names) signature += '/' + QFile::encodeName(name);
    for (const char* file : kReplacedWhole) {
        const QString name = QString::fromLatin1(file);
        if (names.contains(name)) {
            signature += '|' + QByteArray(file);
            appendStamp(&signature, dir.filePath(name));
        }
    }
    // A launcher or app that dies lets go of the run's lock without any file changing: running -> interrupted.
    if (names.contains(QLatin1String(protocol::kRunLockFile))) {
        const bool held = protocol::probeRunLock(QFile::encodeName(folder).toStdString()) == protocol::RunLockState::Held;
        signature += held ? "|held" : "|free";
    }
    return signature;
}

QHash<QString, QByteArray> RunsFolderWatch::signatures(const QStringList& folders)
{
    QHash<QString, QByteArray> result;
    for (const QString& folder : folders) result.insert(folder, signature(folder));
    return result;
}

QStringList RunsFolderWatch::foldersToWatch(const QStringList& roots, const QList<runs::RunRecord>& runs)
{
    QStringList folders = roots;
    QSet<QString> listed;
    for (const runs::RunRecord& run : runs) {
        const QString path = QDir::cleanPath(run.path);
        listed.insert(path);
        if (!runs::isFinalRunStatus(run.status) && !folders.contains(path)) folders << path;
    }
    // A folder that is not a run yet may become one (ringmaster-launch creates it, then writes job.json).
    for (const QString& root : roots) {
        const QDir dir(root);
        for (const QString& name : dir.entryList(QDir::Dirs | QDir::NoDotAndDotDot, QDir::Name)) {
            const QString path = QDir::cleanPath(dir.filePath(name));
            if (!listed.contains(path) && !folders.contains(path)) folders << path;
            if (folders.size() >= kMaxWatched) return folders;
        }
    }
    return folders.mid(0, kMaxWatched);
}

void RunsFolderWatch::watch(const QStringList& folders, const QHash<QString, QByteArray>& before)
{
    QHash<QString, QByteArray> known;
    bool unknown = false;
    for (const QString& folder : folders.mid(0, kMaxWatched)) {
        const auto it = before.constFind(folder);
        known.insert(folder, it == before.constEnd() ? QByteArray() : *it);
        if (it == before.constEnd()) {
            unknown = true;            // first watched now: what it held when listed is not known
            m_dirty.insert(folder);
        }
    }
    QStringList gone;
    for (const QString& path : m_watcher->directories()) {
        if (!known.contains(path)) gone << path;
    }
    if (!gone.isEmpty()) m_watcher->removePaths(gone);
    QStringList added;
    const QStringList current = m_watcher->directories();
    for (auto it = known.constBegin(); it != known.constEnd(); ++it) {
        if (!current.contains(it.key())) added << it.key();
    }
    if (!added.isEmpty()) m_watcher->addPaths(added);   // a folder gone meanwhile is refused: the next check sees it
    m_known = known;
    if (unknown) m_settle.start();
}

void RunsFolderWatch::setPollInterval(int ms)
{
    m_pollMs = ms;
    setPolling(m_polling);
}

void RunsFolderWatch::setPolling(bool on)
{
    m_polling = on;
    if (on && m_pollMs > 0) m_poll.start(m_pollMs);
    else m_poll.stop();
}

void RunsFolderWatch::checkAll()
{
    for (auto it = m_known.constBegin(); it != m_known.constEnd(); ++it) m_dirty.insert(it.key());
    startCheck();
}

void RunsFolderWatch::onDirectoryChanged(const QString& path)
{
    m_dirty.insert(path);
    m_settle.start();   // a burst of changes (a run's first files) is checked once
}

void RunsFolderWatch::startCheck()
{
    if (m_dirty.isEmpty()) return;
    if (m_check.isRunning()) {
        m_checkAgain = true;
        return;
    }
    QHash<QString, QByteArray> expected;
    for (const QString& path : std::as_const(m_dirty)) {
        if (m_known.contains(path)) expected.insert(path, m_known.value(path));
    }
    m_dirty.clear();
    if (expected.isEmpty()) return;
    m_check.setFuture(QtConcurrent::run([expected] {
        for (auto it = expected.constBegin(); it != expected.constEnd(); ++it) {
            if (signature(it.key()) != it.value()) return true;
        }
        return false;
    }));
}

void RunsFolderWatch::onChecked()
{
    const bool changedNow = m_check.result();
    if (m_checkAgain) {
        m_checkAgain = false;
        startCheck();
    }
    Q_EMIT checked(changedNow);
    if (changedNow) Q_EMIT changed();
}

} // namespace ringmaster::ui
