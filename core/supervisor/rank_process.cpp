#include "supervisor/rank_process.h"

#include <QDateTime>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

namespace ringmaster::supervisor {
namespace {

constexpr int kChildSetupFailedExitCode = 126;
constexpr int kMaxFdToMark = 1 << 20; // the loop's bound where close_range is missing

// Writes "ringmaster: MESSAGE (errno N)\n" to stderr with async-signal-safe calls only.
void childFailure(const char* message)
{
    const int error = errno;
    char digits[16];
    int length = 0;
    for (int value = error; length == 0 || value > 0; value /= 10) digits[length++] = static_cast<char>('0' + value % 10);
    char text[256];
    int at = 0;
    auto put = [&](const char* s) { while (*s && at < static_cast<int>(sizeof text) - 1) text[at++] = *s++; };
    put("ringmaster: ");
    put(message);
    put(" (errno ");
    while (length > 0 && at < static_cast<int>(sizeof text) - 1) text[at++] = digits[--length];
    put(")\n");
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, text, static_cast<size_t>(at));
    ::_exit(kChildSetupFailedExitCode);
}

// Runs in the forked child before exec: async-signal-safe calls only. `maxFd` was read in the parent.
void prepareChild(pid_t groupLeader, pid_t supervisorPid, int maxFd)
{
    // Every rank in one new process group that is not the terminal's foreground group: Ctrl-C typed
    // at the terminal reaches only the front end, which forwards one graceful stop. Rank 0 founds the
    // group (setpgid(0, 0)), the others join it. Not setsid(): a rank in a new session could not be
    // joined by the others (EPERM).
    if (::setpgid(0, groupLeader) != 0) childFailure("cannot join the job's process group");
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) childFailure("cannot ask to die with the supervisor"); // even if it is SIGKILLed
    if (::getppid() != supervisorPid) ::_exit(127); // the supervisor died before prctl took effect
    // A hung rank's stacks (stack_dumps.h) are taken by gdb and py-spy, which are the supervisor's children: where
    // Yama lets a process trace only its own descendants (ptrace_scope 1, Ubuntu's default), this rank lets the
    // supervisor and its descendants attach. Without Yama the call fails (EINVAL) and nothing changes.
    [[maybe_unused]] const int tracer = ::prctl(PR_SET_PTRACER, static_cast<unsigned long>(supervisorPid), 0, 0, 0);
    // "Checkpoint now" (SIGUSR1) is ignored until the program installs a handler, as the trainer does
    // and a script may: a script without one keeps training instead of dying of the default action.
    struct sigaction ignore{};
    ignore.sa_handler = SIG_IGN;
    ::sigaction(SIGUSR1, &ignore, nullptr);
    // Every inherited descriptor above stderr closes on exec: one call on Linux 5.11+, else a loop.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
    for (int fd = 3; fd < maxFd; ++fd) {
        const int flags = ::fcntl(fd, F_GETFD);
        if (flags >= 0) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
}

} // namespace

RankProcess::RankProcess(int rank, const QString& logPath, QObject* parent)
    : QObject(parent)
    , m_rank(rank)
{
    m_log.setRotation(kLogRotateBytes);
    m_log.open(logPath); // a failure shows at the first line written
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
    const long openMax = ::sysconf(_SC_OPEN_MAX);
    const int maxFd = openMax > 0 && openMax < kMaxFdToMark ? static_cast<int>(openMax) : kMaxFdToMark;
    m_process.setProgram(program);
    m_process.setArguments(arguments);
    m_process.setProcessEnvironment(environment);
    m_process.setProcessChannelMode(QProcess::SeparateChannels);
    m_process.setStandardInputFile(QProcess::nullDevice()); // a background group must never read the terminal
    m_process.setChildProcessModifier([groupLeader, supervisorPid, maxFd] { prepareChild(groupLeader, supervisorPid, maxFd); });
    m_process.start(QIODevice::ReadOnly);
    // Qt reports the pid once exec succeeded; rank 0's pid is the group the next ranks join, so wait
    // for it here (milliseconds) rather than race the next fork.
    if (!m_process.waitForStarted(kStartTimeoutMs)) {
        // Not running after the timeout (a loaded machine): without a pid it could be neither
        // signalled nor grouped, so it counts as not started.
        if (m_process.state() != QProcess::NotRunning) failStart(QStringLiteral("did not start within %1 s").arg(kStartTimeoutMs / 1000));
        return;
    }
    m_pid = m_process.processId();
    // The parent's half of the check: the child is in the group it was meant to found or join.
    const pid_t expected = groupLeader == 0 ? static_cast<pid_t>(m_pid) : groupLeader;
    const pid_t actual = ::getpgid(static_cast<pid_t>(m_pid));
    if (actual != expected && m_process.state() == QProcess::Running) {
        failStart(QStringLiteral("is in process group %1 instead of the job's group %2").arg(actual).arg(expected));
    }
}

void RankProcess::failStart(const QString& why)
{
    // Reported before the kill, so the end is this reason and not an anonymous SIGKILL.
    if (!m_reportedEnd) {
        m_reportedEnd = true;
        writeLine("launcher", why.toUtf8());
        Q_EMIT failedToStart(m_rank, why);
    }
    m_process.kill();
    m_process.waitForFinished(kStartTimeoutMs);
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
    // The unfinished line stays bounded: a progress bar redrawn with carriage returns (tqdm) keeps only its
    // latest state, as a terminal would show it (a '\r' at the very end may be half of "\r\n", so it stays);
    // a line longer than kMaxLineBytes is logged in pieces of that size as it arrives.
    if (const qsizetype redraw = partial.lastIndexOf('\r', partial.size() - 2); redraw > 0) partial.remove(0, redraw);
    while (partial.size() > kMaxLineBytes) {
        writeLine(tag, partial.left(kMaxLineBytes));
        partial.remove(0, kMaxLineBytes);
    }
    if (flushAll && !partial.isEmpty()) {
        writeLine(tag, partial);
        partial.clear();
    }
}

void RankProcess::writeLine(const char* tag, const QByteArray& line)
{
    QByteArray clean = line;
    if (clean.endsWith('\r')) clean.chop(1);
    // A line redrawn with carriage returns is logged as it ended up on a terminal: its last state.
    if (const qsizetype redraw = clean.lastIndexOf('\r'); redraw >= 0) clean.remove(0, redraw + 1);
    const QByteArray stamped = QDateTime::currentDateTime().toString(Qt::ISODateWithMs).toUtf8() + ' ' + tag + ' ' +
                               clean + '\n';
    const QString failed = m_log.isOpen() ? m_log.append(stamped) : QStringLiteral("cannot open it");
    if (!failed.isEmpty() && m_onWriteFailure) m_onWriteFailure(m_log.path(), failed);
    const QString text = QString::fromUtf8(clean);
    m_tail.append(text);
    if (m_tail.size() > kTailLines) m_tail.removeFirst();
    Q_EMIT lineLogged(m_rank, text);
}

QString signalName(int signal)
{
    const char* abbrev = sigabbrev_np(signal);
    return abbrev ? QStringLiteral("SIG") + QString::fromLatin1(abbrev) : QString::number(signal);
}

} // namespace ringmaster::supervisor
