#include "test_support.h"

#include <QCoreApplication>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTest>

#include "supervisor/proc_info.h"

#include <cerrno>
#include <csignal>

namespace ringmaster::supervisor::test {

QString trainerPath()
{
    return qEnvironmentVariable("RINGMASTER_TRAINER");
}

QString launchPath()
{
    return qEnvironmentVariable("RINGMASTER_LAUNCH");
}

JobSpec cpuJob(const QString& root, qint64 maxSteps, int epochs)
{
    JobSpec job = defaultJob(0);
    job.nproc = 2;
    job.outputRoot = root;
    job.trainerPath = trainerPath();
    job.gracePeriodSec = 20;
    job.heartbeatTimeoutSec = 60;
    job.setTrainerOption(QStringLiteral("max-steps"), static_cast<double>(maxSteps));
    job.setTrainerOption(QStringLiteral("epochs"), epochs);
    job.setTrainerOption(QStringLiteral("eval-batch-size"), 5000);
    job.setTrainerOption(QStringLiteral("threads"), 1);
    return job;
}

bool processGone(qint64 pid)
{
    if (pid <= 0) return false;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
    const QChar state = proc::state(pid);
    return state == QLatin1Char('?') || state == QLatin1Char('Z');
}

QString readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

QList<qint64> trainerPids(const QString& runDir)
{
    QList<qint64> pids;
    static const QRegularExpression joined(QStringLiteral("pid (\\d+) joined"));
    for (const auto& name : QDir(runDir + QStringLiteral("/logs")).entryList({QStringLiteral("rank-*.log")})) {
        auto it = joined.globalMatch(readAll(runDir + QStringLiteral("/logs/") + name));
        while (it.hasNext()) pids.append(it.next().captured(1).toLongLong());
    }
    return pids;
}

QStringList csvColumn(const QString& path, int column)
{
    QStringList values;
    const auto lines = readAll(path).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (qsizetype i = 1; i < lines.size(); ++i) values.append(lines.at(i).split(QLatin1Char(',')).value(column));
    return values;
}

int csvRows(const QString& path)
{
    return static_cast<int>(csvColumn(path, 0).size());
}

QJsonObject readJson(const QString& path)
{
    return QJsonDocument::fromJson(readAll(path).toUtf8()).object();
}

QList<qint64> ringmasterProcesses(const QString& marker)
{
    QList<qint64> found;
    const qint64 self = QCoreApplication::applicationPid();
    for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
        bool number = false;
        const qint64 pid = entry.toLongLong(&number);
        if (!number || pid == self) continue;
        QFile comm(QStringLiteral("/proc/%1/comm").arg(pid));
        if (!comm.open(QIODevice::ReadOnly) || !comm.readAll().startsWith("ringmaster-")) continue;
        const QChar state = proc::state(pid);
        if (state == QLatin1Char('Z') || state == QLatin1Char('?')) continue;
        QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
        const bool mine = proc::parentPid(pid) == self ||
                          (!marker.isEmpty() && cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(marker.toUtf8()));
        if (mine) found.append(pid);
    }
    return found;
}

QStringList tempFilesUnder(const QString& dir)
{
    QStringList found;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        if (it.fileName().contains(QStringLiteral(".tmp"))) found.append(QDir(dir).relativeFilePath(path));
    }
    return found;
}

QString environmentOf(qint64 pid, const QString& name)
{
    QFile file(QStringLiteral("/proc/%1/environ").arg(pid));
    if (!file.open(QIODevice::ReadOnly)) return {};
    const QByteArray prefix = name.toUtf8() + '=';
    for (const QByteArray& pair : file.readAll().split('\0')) {
        if (pair.startsWith(prefix)) return QString::fromUtf8(pair.mid(prefix.size()));
    }
    return {};
}

QString sharedMemorySegmentOf(qint64 pid)
{
    // "ADDR PERMS OFFSET DEV INODE PATH": the device and inode tell apart two segments that had one name.
    static const QRegularExpression segment(QStringLiteral("(\\S+) +(\\d+) +(/dev/shm/ringmaster-\\S+)"));
    const auto match = segment.match(readAll(QStringLiteral("/proc/%1/maps").arg(pid)));
    return match.hasMatch() ? QStringLiteral("%1 (device %2, inode %3)").arg(match.captured(3), match.captured(1), match.captured(2)) : QString();
}

QList<qint64> csvSteps(const QString& path)
{
    QList<qint64> steps;
    for (const QString& value : csvColumn(path, 0)) steps.append(value.toLongLong());
    return steps;
}

QString writeFile(const QString& path, const QByteArray& content, bool executable)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write(content);
    file.close();
    if (executable) file.setPermissions(file.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeUser);
    return path;
}

QStringList notifyArguments(const QString& dir)
{
    const QString recorder = writeFile(QDir(dir).filePath(QStringLiteral("record-event.sh")), "#!/bin/sh\ncat >> \"$1\"\n", true);
    return {QStringLiteral("--notify-command"), QStringLiteral("%1 '%2'").arg(recorder, QDir(dir).filePath(QStringLiteral("events.jsonl")))};
}

QList<QJsonObject> notifiedEvents(const QString& dir)
{
    QList<QJsonObject> events;
    for (const QString& line : readAll(QDir(dir).filePath(QStringLiteral("events.jsonl"))).split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        events << QJsonDocument::fromJson(line.toUtf8()).object();
    }
    return events;
}

void LaunchProcess::start(const QStringList& arguments, const QStringList& environment, const QStringList& unset)
{
    auto env = QProcessEnvironment::systemEnvironment();
    for (const QString& name : unset) env.remove(name);
    for (const QString& pair : environment) env.insert(pair.section(QLatin1Char('='), 0, 0), pair.section(QLatin1Char('='), 1));
    process.setProcessEnvironment(env);
    process.setProgram(launchPath());
    process.setArguments(arguments);
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start();
}

bool LaunchProcess::waitForOutput(const QString& needle, int timeoutMs)
{
    return QTest::qWaitFor([&] { read(); return output.contains(needle); }, timeoutMs);
}

bool LaunchProcess::finish(int timeoutMs)
{
    const bool done = QTest::qWaitFor([&] { read(); return process.state() == QProcess::NotRunning; }, timeoutMs);
    read();
    return done;
}

QString LaunchProcess::runDir() const
{
    static const QRegularExpression line(QStringLiteral("run (\\S+): \\d+ rank"));
    return line.match(output).captured(1);
}

} // namespace ringmaster::supervisor::test
