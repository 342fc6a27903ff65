#include "rank_process.h"

#include <QDateTime>

#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace ringmaster::supervisor {
namespace {

// Runs in the forked child before exec: async-signal-safe calls only.
void prepareChild(pid_t groupLeader, pid_t supervisorPid)
{
    if (groupLeader == 0) {
        ::setsid();                       // new session and process group: terminal Ctrl-C never reaches it
    } else {
        ::setpgid(0, groupLeader);        // join the job's group, so one kill(-group) reaches every rank
    }
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);   // the supervisor dying (even by SIGKILL) takes the rank with it
    if (::getppid() != supervisorPid) ::_exit(127); // the supervisor died before prctl took effect
    const long maxFd = ::sysconf(_SC_OPEN_MAX);
    for (int fd = 3; fd < (maxFd > 0 && maxFd < 65536 ? maxFd : 65536); ++fd) {
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

} // namespace

RankProcess::RankProcess(int rank, const QString& logPath, QObject* parent)
    : QObject(parent)
    , m_rank(rank)
    , m_log(logPath)
{
    m_log.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered);
    // Everything is connected before start().
    connect(&m_process, &QProcess::readyReadStandardOutput, this,
            [this] { drain(QProcess::StandardOutput, m_partialOut, "out", false); });
    connect(&m_process, &QProcess::readyReadStandardError, this,
            [this] { drain(QProcess::StandardError, m_partialErr, "err", false); });
    connect(&m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart && !m_reportedEnd) {
            m_reportedEnd = true;
            writeLine("launcher", QStringLiteral("failed to start: %1").arg(m_process.errorString()).toUtf8());
            Q_EMIT failedToStart(m_rank, m_process.errorString());
        }
    });
    connect(&m_process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        drain(QProcess::StandardOutput, m_partialOut, "out", true);
        drain(QProcess::StandardError, m_partialErr, "err", true);
        if (m_reportedEnd) return;
        m_reportedEnd = true;
        // On a crash QProcess's exit code is the signal number.
        const int signal = status == QProcess::CrashExit ? exitCode : 0;
        Q_EMIT finished(m_rank, status == QProcess::CrashExit ? -1 : exitCode, signal);
    });
}

RankProcess::~RankProcess()
{
    if (m_process.state() != QProcess::NotRunning) {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
}

void RankProcess::start(const QString& program, const QStringList& arguments, const QProcessEnvironment& environment,
                        pid_t groupLeader)
{
    const pid_t supervisorPid = ::getpid();
    m_process.setProgram(program);
    m_process.setArguments(arguments);
    m_process.setProcessEnvironment(environment);
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    m_process.setChildProcessModifier([groupLeader, supervisorPid] { prepareChild(groupLeader, supervisorPid); });
    m_process.start(QIODevice::ReadOnly);
    // Qt reports the pid once exec succeeded; rank 0's pid is the group the next ranks join, so wait
    // for it here (milliseconds) rather than race the next fork.
    if (m_process.waitForStarted(kStartTimeoutMs)) m_pid = m_process.processId();
}

QStringList RankProcess::lastLines(int count) const
{
    return m_tail.mid(std::max<qsizetype>(0, m_tail.size() - count));
}

void RankProcess::drain(QProcess::ProcessChannel channel, QByteArray& partial, const char* tag, bool flushAll)
{
    m_process.setReadChannel(channel);
    partial.append(m_process.readAll());
    qsizetype start = 0;
    for (qsizetype newline; (newline = partial.indexOf('\n', start)) >= 0; start = newline + 1) {
        writeLine(tag, partial.mid(start, newline - start));
    }
    partial.remove(0, start);
    if (flushAll && !partial.isEmpty()) {
        writeLine(tag, partial);
        partial.clear();
    }
}

void RankProcess::writeLine(const char* tag, const QByteArray& line)
{
    QByteArray clean = line;
    if (clean.endsWith('\r')) clean.chop(1);
    const QByteArray stamped = QDateTime::currentDateTime().toString(Qt::ISODateWithMs).toUtf8() + ' ' + tag + ' ' +
                               clean + '\n';
    m_log.write(stamped);
    const QString text = QString::fromUtf8(clean);
    m_tail.append(text);
    if (m_tail.size() > kTailLines) m_tail.removeFirst();
    Q_EMIT lineLogged(m_rank, text);
}

void signalGroup(pid_t group, int signal)
{
    if (group > 0) ::kill(-group, signal);
}

QString signalName(int signal)
{
    const char* abbrev = sigabbrev_np(signal);
    return abbrev ? QStringLiteral("SIG") + QString::fromLatin1(abbrev) : QString::number(signal);
}

} // namespace ringmaster::supervisor
