#include "test_support.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QTest>

#include "proc_info.h"

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

QString writeFile(const QString& path, const QByteArray& content, bool executable)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) return {};
    file.write(content);
    file.close();
    if (executable) file.setPermissions(file.permissions() | QFileDevice::ExeOwner | QFileDevice::ExeUser);
    return path;
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
