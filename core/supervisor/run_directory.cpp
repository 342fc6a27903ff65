#include "run_directory.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

#include <sys/stat.h>

namespace ringmaster::supervisor {

bool RunDirectory::adopt(const QString& path, QString* error)
{
    const QString absolute = QFileInfo(path).absoluteFilePath();
    if (!QFileInfo(absolute + QStringLiteral("/job.json")).isFile()) {
        *error = QStringLiteral("%1 is not a run directory (it has no job.json)").arg(path);
        return false;
    }
    m_path = absolute;
    rememberIdentity();
    m_launcherLog.close();
    m_launcherLog.setFileName(m_path + QStringLiteral("/logs/launcher.log"));
    m_launcherLog.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered);
    m_clock.start();
    return true;
}

bool RunDirectory::prepare(const JobSpec& job, int masterPort, const QString& trainerPath, QString* error, bool holdRunLock)
{
    bool created = false;
    if (!job.resume.isEmpty()) {
        m_path = runDirectoryOf(job.resume);
        if (m_path.isEmpty()) {
            *error = QStringLiteral("--resume %1: no such run directory or checkpoint").arg(job.resume);
            return false;
        }
    } else if (!job.runDir.isEmpty()) {
        m_path = QFileInfo(job.runDir).absoluteFilePath();
        // A script run leaves no metrics.csv; its summary.json marks the folder as a run's.
        if (QFileInfo::exists(m_path + QStringLiteral("/metrics.csv")) ||
            (job.isScript() && QFileInfo::exists(m_path + QStringLiteral("/summary.json")))) {
            *error = QStringLiteral("--out %1 already holds a run: continue it with --resume %1, or choose another folder")
                         .arg(m_path);
            return false;
        }
        created = !QFileInfo::exists(m_path);
    } else {
        const QString stem = QFileInfo(job.outputRoot).absoluteFilePath() + QLatin1Char('/') +
                             QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QLatin1Char('-') +
                             job.runName();
        m_path = stem;
        for (int n = 2; QFileInfo::exists(m_path); ++n) m_path = stem + QStringLiteral("-%1").arg(n);
        created = true;
    }
    if (!QDir().mkpath(m_path + QStringLiteral("/logs"))) {
        *error = QStringLiteral("cannot create the run directory %1: check permissions and free space").arg(m_path);
        return false;
    }
    if (holdRunLock) {
        std::string detail;
        const auto taken = m_runLock.acquire(QFile::encodeName(m_path).toStdString(), &detail);
        if (taken != protocol::RunLock::Result::Taken) {
            if (created) QDir(m_path).removeRecursively();
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
    try {
        resolved.save(jobFile());
    } catch (const JobError& e) {
        m_runLock.release();
        if (created) QDir(m_path).removeRecursively();
        *error = e.message();
        return false;
    }
    rememberIdentity();
    m_launcherLog.close();
    m_launcherLog.setFileName(m_path + QStringLiteral("/logs/launcher.log"));
    m_launcherLog.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered);
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
    for (const QString& folder : QStringList{m_path, m_path + QStringLiteral("/checkpoints")}) {
        const QDir dir(folder);
        for (const QString& name : dir.entryList({pattern}, QDir::Files | QDir::Hidden)) {
            if (QFile::remove(dir.filePath(name))) removed << dir.filePath(name);
        }
    }
    return removed;
}

QString RunDirectory::latestCheckpoint() const
{
    const auto files = QDir(m_path + QStringLiteral("/checkpoints")).entryList({QStringLiteral("step-*.pt")}, QDir::Files, QDir::Name);
    return files.isEmpty() ? QString() : m_path + QStringLiteral("/checkpoints/") + files.last();
}

QString RunDirectory::summaryStatus() const
{
    QFile file(m_path + QStringLiteral("/summary.json"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("status")).toString();
}

void RunDirectory::patchSummary(const Outcome& outcome) const
{
    if (!lostReason().isEmpty()) return; // never into a folder that took the deleted one's name
    const QString file = m_path + QStringLiteral("/summary.json");
    QJsonObject summary;
    QFile in(file);
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
    if (failed) {
        summary.insert(QStringLiteral("root_cause"), outcome.rootCause.summary());
        summary.insert(QStringLiteral("root_cause_rank"), outcome.rootCause.rank);
        summary.insert(QStringLiteral("root_cause_last_lines"), QJsonArray::fromStringList(outcome.rootCause.lastLines));
    }
    QSaveFile out(file);
    if (out.open(QIODevice::WriteOnly)) {
        out.write(QJsonDocument(summary).toJson(QJsonDocument::Indented));
        out.commit();
    }
}

void RunDirectory::writeCommands(const QJsonObject& record) const
{
    QSaveFile out(m_path + QStringLiteral("/commands.json"));
    if (out.open(QIODevice::WriteOnly)) {
        out.write(QJsonDocument(record).toJson(QJsonDocument::Indented));
        out.commit();
    }
}

void RunDirectory::log(const QString& message)
{
    if (!m_launcherLog.isOpen()) return;
    m_launcherLog.write((QDateTime::currentDateTime().toString(Qt::ISODateWithMs) + QLatin1Char(' ') + message + QLatin1Char('\n')).toUtf8());
}

} // namespace ringmaster::supervisor
