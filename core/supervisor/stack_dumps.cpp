#include "supervisor/stack_dumps.h"

#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>
#include <QVariant>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ringmaster::supervisor {
namespace {

// A thread's backtrace starts with "Thread 3 (Thread 0x7f… (LWP 1234) "name"):" in gdb's output and with
// "Thread 1234 (idle): "MainThread"" in py-spy's.
int threadsIn(const QByteArray& output)
{
    int threads = 0;
    for (const QByteArray& line : output.split('\n')) {
        if (line.startsWith("Thread ")) ++threads;
    }
    return threads;
}

// faulthandler's threads start with "Thread 0x00007f… (most recent call first):", the one that took the signal
// with "Current thread 0x…".
int faulthandlerThreadsIn(const QByteArray& output)
{
    int threads = 0;
    for (const QByteArray& line : output.split('\n')) {
        if (line.startsWith("Thread 0x") || line.startsWith("Current thread 0x")) ++threads;
    }
    return threads;
}

// Whether process pid has a handler for signal (its SigCgt mask in /proc/PID/status): sending a signal it does not
// catch would end it before gdb could look.
bool catchesSignal(qint64 pid, int signal)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (signal < 1 || signal > 64 || !status.open(QIODevice::ReadOnly)) return false;
    for (const QByteArray& line : status.readAll().split('\n')) {
        if (!line.startsWith("SigCgt:")) continue;
        bool ok = false;
        const quint64 mask = line.mid(7).trimmed().toULongLong(&ok, 16);
        return ok && (mask >> (signal - 1)) & 1U;
    }
    return false;
}

qint64 sizeOf(const QString& path)
{
    return QFileInfo(path).size(); // 0 when it does not exist (yet)
}

// The last line of a tool's output, which says why it has no stack (e.g. "ptrace: Operation not permitted.").
QString lastLineOf(const QByteArray& output)
{
    const QList<QByteArray> lines = output.trimmed().split('\n');
    return lines.isEmpty() ? QString() : QString::fromUtf8(lines.last()).trimmed();
}

} // namespace

StackDumps::StackDumps(QObject* parent) : QObject(parent) {}

StackDumps::~StackDumps()
{
    for (QProcess* tool : findChildren<QProcess*>()) {
        tool->disconnect(this);
        if (tool->state() != QProcess::NotRunning) {
            tool->kill();
            tool->waitForFinished(2000);
        }
    }
}

QString StackDumps::debugger()
{
    return QStandardPaths::findExecutable(QStringLiteral("gdb"));
}

QString StackDumps::pythonSpyFor(const QString& interpreter)
{
    // A virtual environment's own py-spy first (pip install py-spy puts it beside the interpreter), then PATH's.
    const QString beside = QFileInfo(interpreter).absolutePath() + QStringLiteral("/py-spy");
    if (!interpreter.isEmpty() && QFileInfo(beside).isExecutable()) return beside;
    return QStandardPaths::findExecutable(QStringLiteral("py-spy"));
}

void StackDumps::start(const QList<Target>& targets, int timeoutMs)
{
    m_targets = targets;
    m_timeoutMs = timeoutMs;
    m_results = QList<Result>(targets.size());
    m_summary = QStringList(targets.size());
    m_pending = static_cast<int>(targets.size());
    if (m_pending == 0) {
        QTimer::singleShot(0, this, [this] { Q_EMIT finished({}); });
        return;
    }
    // Whatever the tools do (one stuck where even SIGKILL cannot end it), finished() comes by this deadline:
    // each round of kMaxConcurrent targets waits for faulthandler, then runs gdb, then py-spy, each bounded.
    const int rounds = (static_cast<int>(targets.size()) + kMaxConcurrent - 1) / kMaxConcurrent;
    QTimer::singleShot(rounds * (2 * timeoutMs + kNcclTraceWaitMs) + kDeadlineMarginMs, this, [this] {
        m_queue.clear(); // nothing starts after the deadline
        for (int i = 0; i < static_cast<int>(m_targets.size()); ++i) {
            if (m_results.at(i).done) continue;
            addTrouble(i, QStringLiteral("the dump's deadline passed first"));
            finish(i);
        }
    });
    for (int i = 0; i < static_cast<int>(targets.size()); ++i) m_queue.append(i);
    for (int i = 0; i < kMaxConcurrent && !m_queue.isEmpty(); ++i) startNext();
}

void StackDumps::startNext()
{
    const int index = m_queue.takeFirst();
    const QString header = QStringLiteral("==== %1: every thread's stack of rank %2 (pid %3), taken by Ringmaster\n")
                               .arg(QDateTime::currentDateTime().toString(Qt::ISODateWithMs))
                               .arg(m_targets.at(index).rank)
                               .arg(m_targets.at(index).pid);
    append(index, header.toUtf8());
    askTheRank(index);
}

void StackDumps::askTheRank(int index)
{
    Result& result = m_results[index];
    result.askedPython = askFaulthandler(index);
    result.askedTrace = askFlightRecorder(index);
    if (result.askedPython || result.askedTrace) {
        waitForTheRank(index);
    } else {
        startGdb(index);
    }
}

bool StackDumps::askFaulthandler(int index)
{
    const Target& target = m_targets.at(index);
    if (target.pythonSignal <= 0) return false;
    if (!catchesSignal(target.pid, target.pythonSignal)) {
        const QString why = QStringLiteral("no faulthandler stacks: the rank does not catch signal %1 (its Python ran "
                                           "without Ringmaster's sitecustomize: -I, -S, or another PYTHONPATH)")
                                .arg(target.pythonSignal);
        append(index, QStringLiteral("ringmaster: %1\n").arg(why).toUtf8());
        return false;
    }
    append(index, QStringLiteral("ringmaster: the Python stacks (faulthandler, signal %1):\n").arg(target.pythonSignal).toUtf8());
    m_results[index].stacksBefore = m_results[index].stacksLast = sizeOf(target.path);
    if (::kill(static_cast<pid_t>(target.pid), target.pythonSignal) != 0) {
        append(index, QStringLiteral("ringmaster: cannot signal the rank: %1\n").arg(QString::fromLocal8Bit(std::strerror(errno))).toUtf8());
        return false;
    }
    return true;
}

bool StackDumps::askFlightRecorder(int index)
{
    const Target& target = m_targets.at(index);
    if (target.ncclTraceStem.isEmpty()) return false;
    // PyTorch made the pipe when the rank's NCCL group started, and reads it from its monitoring thread: any bytes
    // ask for a dump. Opened without blocking: no reader (the rank has no NCCL group) fails at once with ENXIO.
    const QByteArray pipe = QFile::encodeName(target.ncclTraceStem + QString::number(target.rank) + QStringLiteral(".pipe"));
    struct stat info {};
    if (::lstat(pipe.constData(), &info) != 0 || !S_ISFIFO(info.st_mode)) return false;
    const int fd = ::open(pipe.constData(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    const bool asked = fd >= 0 && ::write(fd, "1\n", 2) == 2;
    if (fd >= 0) ::close(fd);
    const QFileInfo earlier(target.ncclTraceStem + QString::number(target.rank));
    m_results[index].traceBeforeMs = earlier.exists() ? earlier.lastModified().toMSecsSinceEpoch() : -1;
    return asked;
}

void StackDumps::waitForTheRank(int index)
{
    // Each dump is written from inside the rank: done once its file has grown (faulthandler's) or exists (the
    // trace) and then kept its size for a poll, or at the wait's end (a stopped rank runs no handler).
    QTimer::singleShot(kRankDumpPollMs, this, [this, index] {
        if (m_results.at(index).done) return;
        const Target& target = m_targets.at(index);
        Result& result = m_results[index];
        result.waitedMs += kRankDumpPollMs;
        const qint64 stacks = sizeOf(target.path);
        const QString traceFile = target.ncclTraceStem + QString::number(target.rank);
        const QFileInfo traceInfo(traceFile);
        const bool newTrace = traceInfo.exists() && traceInfo.lastModified().toMSecsSinceEpoch() != result.traceBeforeMs;
        const qint64 trace = newTrace ? traceInfo.size() : -1;
        const bool pythonSettled = !result.askedPython || (stacks > result.stacksBefore && stacks == result.stacksLast);
        const bool traceSettled = !result.askedTrace || (trace > 0 && trace == result.traceLast);
        result.stacksLast = stacks;
        result.traceLast = trace;
        const int limit = result.askedTrace ? kNcclTraceWaitMs : kFaulthandlerWaitMs;
        if ((pythonSettled && traceSettled) || result.waitedMs >= limit) {
            afterTheRank(index);
        } else {
            waitForTheRank(index);
        }
    });
}

void StackDumps::afterTheRank(int index)
{
    const Target& target = m_targets.at(index);
    Result& result = m_results[index];
    if (result.askedPython) {
        QFile file(target.path);
        QByteArray written;
        if (file.open(QIODevice::ReadOnly) && file.seek(result.stacksBefore)) written = file.readAll();
        result.pythonThreads = faulthandlerThreadsIn(written);
        if (result.pythonThreads == 0) {
            append(index, QStringLiteral("ringmaster: faulthandler wrote nothing within %1 s (a stopped rank runs no handler)\n")
                              .arg(result.waitedMs / 1000.0, 0, 'f', 1).toUtf8());
        }
        append(index, "\n");
    }
    if (result.askedTrace) {
        const QString traceFile = target.ncclTraceStem + QString::number(target.rank);
        if (result.traceLast > 0) result.trace = traceFile;
        append(index, (result.traceLast > 0
                           ? QStringLiteral("ringmaster: PyTorch's NCCL flight recorder wrote the rank's last collectives to %1 "
                                            "(read it with torchfrtrace)\n\n").arg(traceFile)
                           : QStringLiteral("ringmaster: PyTorch's NCCL flight recorder wrote no trace within %1 s of the request\n\n")
                                 .arg(result.waitedMs / 1000.0, 0, 'f', 1))
                          .toUtf8());
    }
    startGdb(index);
}

void StackDumps::startGdb(int index)
{
    const Target& target = m_targets.at(index);
    const QStringList arguments{QStringLiteral("-batch"), QStringLiteral("-nx"), QStringLiteral("-p"), QString::number(target.pid),
                                QStringLiteral("-ex"), QStringLiteral("thread apply all bt")};
    const auto then = [this, index](const QByteArray& output, const QString& trouble) { afterGdb(index, output, trouble); };
    if (!target.via.isEmpty()) {
        // The node's own gdb, found on its PATH there; what srun says when it cannot start it lands in the file.
        run(target.via.first(), target.via.mid(1) + QStringList{QStringLiteral("gdb")} + arguments, then);
        return;
    }
    const QString gdb = debugger();
    if (gdb.isEmpty()) {
        QTimer::singleShot(0, this, [this, index] { afterGdb(index, {}, QStringLiteral("gdb is not installed: apt install gdb")); });
        return;
    }
    run(gdb, arguments, then);
}

void StackDumps::append(int index, const QByteArray& bytes)
{
    // Appended: a later attempt's hang adds its own section, and the earlier root cause's file stays true.
    QFile file(m_targets.at(index).path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Append) || file.write(bytes) != bytes.size()) {
        if (!m_results.at(index).writeFailed) {
            m_results[index].writeFailed = true;
            addTrouble(index, QStringLiteral("cannot write %1: %2").arg(file.fileName(), file.errorString()));
        }
    }
}

void StackDumps::run(const QString& program, const QStringList& arguments,
                     std::function<void(const QByteArray&, const QString&)> then)
{
    auto* process = new QProcess(this);
    process->setProcessChannelMode(QProcess::MergedChannels);
    process->setStandardInputFile(QProcess::nullDevice());
    const QString name = QFileInfo(program).fileName();
    connect(process, &QProcess::finished, this, [this, process, name, then] {
        const QString trouble = process->property("timedOut").toBool()
                                    ? QStringLiteral("%1 took longer than %2 s; what it wrote is kept").arg(name).arg(m_timeoutMs / 1000)
                                    : QString();
        then(process->readAll(), trouble);
        process->deleteLater();
    });
    connect(process, &QProcess::errorOccurred, this, [process, name, then](QProcess::ProcessError error) {
        if (error != QProcess::FailedToStart) return; // a crash or a kill still ends in finished()
        then({}, QStringLiteral("%1 did not start: %2").arg(name, process->errorString()));
        process->deleteLater();
    });
    QTimer::singleShot(m_timeoutMs, process, [process] {
        if (process->state() == QProcess::NotRunning) return;
        process->setProperty("timedOut", true);
        process->kill();
    });
    process->start(program, arguments);
}

void StackDumps::afterGdb(int index, const QByteArray& output, const QString& trouble)
{
    if (m_results.at(index).done) return; // the deadline came first
    const Target& target = m_targets.at(index);
    Result& result = m_results[index];
    result.threads = threadsIn(output);
    const QString failure = !trouble.isEmpty() ? trouble
                            : result.threads == 0 ? QStringLiteral("gdb: %1").arg(lastLineOf(output))
                                                  : QString();
    append(index, output + (failure.isEmpty() ? QByteArray() : QStringLiteral("ringmaster: %1\n").arg(failure).toUtf8()));
    addTrouble(index, failure);
    if (target.pythonSpy.isEmpty()) {
        finish(index);
        return;
    }
    run(target.pythonSpy, {QStringLiteral("dump"), QStringLiteral("--pid"), QString::number(target.pid)},
        [this, index](const QByteArray& pyOutput, const QString& pyTrouble) {
            if (m_results.at(index).done) return;
            Result& r = m_results[index];
            const int spied = threadsIn(pyOutput);
            r.pythonThreads = std::max(r.pythonThreads, spied);
            const QString pyFailure = !pyTrouble.isEmpty() ? pyTrouble
                                      : spied == 0 ? QStringLiteral("py-spy: %1").arg(lastLineOf(pyOutput))
                                                   : QString();
            append(index, "\nringmaster: the Python stacks (py-spy dump):\n" + pyOutput +
                              (pyFailure.isEmpty() ? QByteArray() : QStringLiteral("ringmaster: %1\n").arg(pyFailure).toUtf8()));
            addTrouble(index, pyFailure);
            finish(index);
        });
}

void StackDumps::addTrouble(int index, const QString& trouble)
{
    if (trouble.isEmpty()) return;
    QString& all = m_results[index].trouble;
    all += (all.isEmpty() ? QString() : QStringLiteral("; ")) + trouble;
}

void StackDumps::finish(int index)
{
    const Target& target = m_targets.at(index);
    Result& result = m_results[index];
    if (result.done) return;
    result.done = true;
    QStringList found;
    if (result.threads > 0) found << QStringLiteral("%1 thread(s)' stacks").arg(result.threads);
    if (result.pythonThreads > 0) found << QStringLiteral("%1 Python thread(s)").arg(result.pythonThreads);
    QString line = found.isEmpty() ? QStringLiteral("rank %1: no stacks").arg(target.rank)
                                   : QStringLiteral("rank %1: %2 in %3").arg(target.rank).arg(found.join(QStringLiteral(", ")), target.path);
    if (!result.trace.isEmpty()) line += QStringLiteral("; NCCL trace in %1").arg(result.trace);
    if (!result.trouble.isEmpty()) line += QStringLiteral(" (%1)").arg(result.trouble);
    m_summary[index] = line;
    if (!m_queue.isEmpty()) startNext();
    if (--m_pending == 0) Q_EMIT finished(m_summary);
}

} // namespace ringmaster::supervisor
