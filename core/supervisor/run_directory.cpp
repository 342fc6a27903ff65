#include "supervisor/run_directory.h"

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include "protocol/safe_files.h"
#include "supervisor/script_environment.h"

namespace ringmaster::supervisor {

bool RunDirectory::adopt(const QString& path, QString* error)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    if (!QFileInfo(absolute + QLatin1Char('/') + QLatin1String(protocol::kJobFile)).isFile()) {
        *error = QStringLiteral("%1 is not a run directory (it has no %2)").arg(path, QLatin1String(protocol::kJobFile));
        return false;
    }
    if (const std::string link = protocol::symlinkProblem(QFile::encodeName(absolute).toStdString()); !link.empty()) {
        *error = QString::fromStdString(link);
        return false;
    }
    m_path = absolute;
    rememberIdentity();
    openLauncherLog();
    m_clock.start();
    return true;
}

namespace {

// mkdir(2) of one folder, exclusively: false with EEXIST when something of that name is there already.
bool makeFolder(const QString& path)
{
    return ::mkdir(QFile::encodeName(path).constData(), 0755) == 0;
}

} // namespace

void RunDirectory::openLauncherLog()
{
    m_launcherLog.setRotation(kLogRotateBytes);
    QString error;
    if (!m_launcherLog.open(file(protocol::kLauncherLogFile), &error)) reportWriteFailure(file(protocol::kLauncherLogFile), error);
}

bool RunDirectory::prepare(const JobSpec& job, int masterPort, const QString& trainerPath, QString* error, bool holdRunLock)
{
    bool created = false;
    const auto cannotCreate = [error](const QString& path) {
        *error = QStringLiteral("cannot create the run directory %1: %2: check permissions and free space")
                     .arg(path, QString::fromLocal8Bit(std::strerror(errno)));
        return false;
    };
    if (!job.resume.isEmpty()) {
        m_path = runDirectoryOf(job.resume);
        if (m_path.isEmpty()) {
            *error = QStringLiteral("--resume %1: no such run directory or checkpoint").arg(job.resume);
            return false;
        }
    } else if (!job.runDir.isEmpty()) {
        m_path = QFileInfo(job.runDir).absoluteFilePath();
        // A script run leaves no metrics.csv; its summary.json marks the folder as a run's.
        if (QFileInfo::exists(file(protocol::kMetricsFile)) ||
            (job.isScript() && QFileInfo::exists(file(protocol::kSummaryFile)))) {
            *error = QStringLiteral("--out %1 already holds a run: continue it with --resume %1, or choose another folder")
                         .arg(m_path);
            return false;
        }
        // Only the launch that made the folder may remove it again: another may have made it a moment ago.
        if (!QDir().mkpath(QFileInfo(m_path).absolutePath())) return cannotCreate(QFileInfo(m_path).absolutePath());
        created = makeFolder(m_path);
        if (!created && errno != EEXIST) return cannotCreate(m_path);
    } else {
        const QString root = QFileInfo(job.outputRoot).absoluteFilePath();
        if (!QDir().mkpath(root)) return cannotCreate(root);
        const QString stem = root + QLatin1Char('/') + QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")) +
                             QLatin1Char('-') + job.runName();
        // mkdir is the test and the claim in one step: a name another launch took in the same second is skipped.
        m_path = stem;
        for (int n = 2; !makeFolder(m_path); ++n) {
            if (errno != EEXIST || n > 10000) return cannotCreate(m_path);
            m_path = stem + QStringLiteral("-%1").arg(n);
        }
        created = true;
    }
    if (!created) {
        if (const std::string link = protocol::symlinkProblem(QFile::encodeName(m_path).toStdString()); !link.empty()) {
            *error = QString::fromStdString(link);
            return false;
        }
    }
    if (!makeFolder(file(protocol::kLogsFolder)) && errno != EEXIST) {
        const bool failed = cannotCreate(file(protocol::kLogsFolder));
        if (created) QDir(m_path).removeRecursively();
        return failed;
    }
    if (holdRunLock) {
        std::string detail;
        const auto taken = m_runLock.acquire(QFile::encodeName(m_path).toStdString(), &detail);
        if (taken != protocol::RunLock::Result::Taken) {
            // Held elsewhere: another launch uses the folder now, even if this one made it. Never removed then.
            if (created && taken != protocol::RunLock::Result::HeldElsewhere) QDir(m_path).removeRecursively();
            *error = taken == protocol::RunLock::Result::HeldElsewhere
                         ? QStringLiteral("%1 is being run right now by %2: stop that run first, or resume another")
                               .arg(m_path, QString::fromStdString(detail))
                         : QStringLiteral("%1: %2").arg(m_path, QString::fromStdString(detail));
            return false;
        }
    }
    JobSpec resolved = job;
    resolved.runDir = m_path;
    resolved.masterPort = masterPort;
    resolved.trainerPath = trainerPath;
    // As JobSpec::save writes it, but never through a link and with the folder synced after the rename.
    std::string failure;
    if (!protocol::writeFileAtomically(QFile::encodeName(jobFile()).toStdString(),
                                       QJsonDocument(resolved.toJson()).toJson(QJsonDocument::Indented).toStdString(), &failure)) {
        m_runLock.release();
        if (created) QDir(m_path).removeRecursively();
        *error = QStringLiteral("cannot write the run's job file (%1): check permissions and free space").arg(QString::fromStdString(failure));
        return false;
    }
    rememberIdentity();
    openLauncherLog();
    m_clock.start();
    return true;
}

void RunDirectory::rememberIdentity()
{
    struct stat info {};
    const bool known = ::stat(QFile::encodeName(m_path).constData(), &info) == 0;
    m_device = known ? static_cast<quint64>(info.st_dev) : 0;
    m_inode = known ? static_cast<quint64>(info.st_ino) : 0;
}

QString RunDirectory::lostReason() const
{
    if (m_path.isEmpty() || m_inode == 0) return {};
    struct stat info {};
    if (::stat(QFile::encodeName(m_path).constData(), &info) != 0) {
        return QStringLiteral("the run directory %1 was deleted while the run was active").arg(m_path);
    }
    if (static_cast<quint64>(info.st_dev) != m_device || static_cast<quint64>(info.st_ino) != m_inode) {
        return QStringLiteral("the run directory %1 was deleted while the run was active (a new folder of that name "
                              "is not this run's)").arg(m_path);
    }
    return {};
}

QStringList RunDirectory::removeTempFilesOf(qint64 pid) const
{
    QStringList removed;
    if (m_path.isEmpty() || pid <= 0) return removed;
    const QString pattern = QStringLiteral("*.tmp-%1").arg(pid);
    for (const QString& folder : QStringList{m_path, file(protocol::kCheckpointsFolder)}) {
        const QDir dir(folder);
        for (const QString& name : dir.entryList({pattern}, QDir::Files | QDir::Hidden)) {
            if (QFile::remove(dir.filePath(name))) removed << dir.filePath(name);
        }
    }
    return removed;
}

QString RunDirectory::rankStacks(int rank) const
{
    return stacksFileOf(m_path, QString::number(rank));
}

void RunDirectory::removeRankLeftovers(int worldSize) const
{
    for (int rank = 0; rank < worldSize; ++rank) {
        const QFileInfo file(rankStacks(rank));
        if (file.isFile() && !file.isSymLink() && file.size() == 0) QFile::remove(file.filePath());
        const QByteArray pipe = QFile::encodeName(ncclTraceStemOf(m_path) + QString::number(rank) + QStringLiteral(".pipe"));
        struct stat info {};
        if (::lstat(pipe.constData(), &info) == 0 && S_ISFIFO(info.st_mode)) ::unlink(pipe.constData());
    }
}

QString RunDirectory::latestCheckpoint() const
{
    const QDir checkpoints(file(protocol::kCheckpointsFolder));
    const auto files = checkpoints.entryList({QLatin1String(protocol::kCheckpointPrefix) + QStringLiteral("*.pt")}, QDir::Files, QDir::Name);
    return files.isEmpty() ? QString() : checkpoints.filePath(files.last());
}

QString RunDirectory::summaryStatus() const
{
    QFile summary(file(protocol::kSummaryFile));
    if (!summary.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(summary.readAll()).object().value(QStringLiteral("status")).toString();
}

void RunDirectory::reportWriteFailure(const QString& path, const QString& reason)
{
    if (m_writeFailures++ > 0 || !m_onWriteFailure) return;
    m_onWriteFailure(QStringLiteral("cannot write %1: %2; the run goes on, but its files miss what could not be written "
                                    "(free space on that disk; a run without its final status is listed interrupted)")
                         .arg(path, reason));
}

bool RunDirectory::writeWhole(const QString& path, const QByteArray& bytes)
{
    std::string error;
    if (protocol::writeFileAtomically(QFile::encodeName(path).toStdString(), bytes.toStdString(), &error)) return true;
    reportWriteFailure(path, QString::fromStdString(error).section(QStringLiteral(": "), -1));
    return false;
}

QJsonObject stragglerRecord(int rank, const QString& message)
{
    return {{QStringLiteral("rank"), rank}, {QStringLiteral("message"), message},
            {QStringLiteral("time"), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs)}};
}

bool RunDirectory::patchSummary(const Outcome& outcome)
{
    if (!lostReason().isEmpty()) return false; // never into a folder that took the deleted one's name
    const QString path = file(protocol::kSummaryFile);
    QJsonObject summary;
    QFile in(path);
    if (in.open(QIODevice::ReadOnly)) summary = QJsonDocument::fromJson(in.readAll()).object();
    in.close();
    const bool failed = outcome.state == RunState::Failed;
    if (failed || !outcome.message.isEmpty() || outcome.supervisorOwnsSummary || !summary.contains(QStringLiteral("status"))) {
        summary.insert(QStringLiteral("status"), runStateName(outcome.state));
    }
    if (!outcome.message.isEmpty()) summary.insert(QStringLiteral("message"), outcome.message);
    if (outcome.supervisorOwnsSummary || !summary.contains(QStringLiteral("seconds"))) {
        summary.insert(QStringLiteral("seconds"), static_cast<double>(m_clock.elapsed()) / 1000.0);
    }
    summary.insert(QStringLiteral("restarts"), outcome.restarts);
    summary.insert(QStringLiteral("world_size"), outcome.worldSize);
    summary.insert(QStringLiteral("metrics_received_over_socket"), outcome.metricsReceived);
    if (outcome.supervisorOwnsSummary && outcome.lastStep >= 0) summary.insert(QStringLiteral("last_step"), outcome.lastStep);
    if (!outcome.lastScalars.isEmpty()) {
        QJsonObject last;
        for (auto it = outcome.lastScalars.cbegin(); it != outcome.lastScalars.cend(); ++it) last.insert(it.key(), it.value());
        summary.insert(QStringLiteral("last_scalars"), last);
    }
    if (!outcome.stragglers.isEmpty()) summary.insert(QStringLiteral("stragglers"), outcome.stragglers);
    if (failed) {
        summary.insert(QStringLiteral("root_cause"), outcome.rootCause.summary());
        summary.insert(QStringLiteral("root_cause_rank"), outcome.rootCause.rank);
        summary.insert(QStringLiteral("root_cause_last_lines"), QJsonArray::fromStringList(outcome.rootCause.lastLines));
    }
    return writeWhole(path, QJsonDocument(summary).toJson(QJsonDocument::Indented));
}

bool RunDirectory::writeCommands(const QJsonObject& record)
{
    return writeWhole(file(protocol::kCommandsFile), QJsonDocument(record).toJson(QJsonDocument::Indented));
}

void RunDirectory::log(const QString& message)
{
    if (!m_launcherLog.isOpen()) return;
    const QString failed =
        m_launcherLog.append((QDateTime::currentDateTime().toString(Qt::ISODateWithMs) + QLatin1Char(' ') + message + QLatin1Char('\n')).toUtf8());
    if (!failed.isEmpty()) reportWriteFailure(m_launcherLog.path(), failed);
}

} // namespace ringmaster::supervisor
