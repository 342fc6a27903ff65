#include "stack_dumps.h"

#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>
#include <QVariant>

namespace ringmaster::supervisor {
namespace {

// "Thread 3 (Thread 0x7f… (LWP 1234) "name"):" heads each thread's backtrace in gdb's output.
int threadsIn(const QByteArray& output)
{
    int threads = 0;
    for (const QByteArray& line : output.split('\n')) {
        if (line.startsWith("Thread ")) ++threads;
    }
    return threads;
}

// gdb's last line that says why it has no stack (e.g. "ptrace: Operation not permitted.").
QString lastLineOf(const QByteArray& output)
{
    const QList<QByteArray> lines = output.trimmed().split('\n');
    return lines.isEmpty() ? QString() : QString::fromUtf8(lines.last()).trimmed();
}

} // namespace

StackDumps::StackDumps(QObject* parent) : QObject(parent) {}

StackDumps::~StackDumps()
{
    for (QProcess* gdb : findChildren<QProcess*>()) {
        gdb->disconnect(this);
        if (gdb->state() != QProcess::NotRunning) {
            gdb->kill();
            gdb->waitForFinished(2000);
        }
    }
}

QString StackDumps::debugger()
{
    return QStandardPaths::findExecutable(QStringLiteral("gdb"));
}

void StackDumps::start(const QList<Target>& targets, int timeoutMs)
{
    m_targets = targets;
    m_summary = QStringList(static_cast<int>(targets.size()), QString());
    m_pending = static_cast<int>(targets.size());
    const QString gdb = debugger();
    if (m_pending == 0) {
        QTimer::singleShot(0, this, [this] { Q_EMIT finished(m_summary); });
        return;
    }
    for (int i = 0; i < static_cast<int>(targets.size()); ++i) {
        const Target& target = targets.at(i);
        if (gdb.isEmpty()) {
            QTimer::singleShot(0, this, [this, i] { done(i, 0, QStringLiteral("gdb is not installed: apt install gdb")); });
            continue;
        }
        auto* process = new QProcess(this);
        process->setProcessChannelMode(QProcess::MergedChannels);
        process->setStandardOutputFile(target.path, QIODevice::Truncate);
        process->setStandardInputFile(QProcess::nullDevice());
        connect(process, &QProcess::finished, this, [this, i, process, timeoutMs] {
            QFile file(m_targets.at(i).path);
            const QByteArray output = file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
            const int threads = threadsIn(output);
            if (process->property("timedOut").toBool()) {
                done(i, threads, QStringLiteral("gdb took longer than %1 s; what it wrote is kept").arg(timeoutMs / 1000));
            } else {
                done(i, threads, threads > 0 ? QString() : QStringLiteral("gdb: %1").arg(lastLineOf(output)));
            }
            process->deleteLater();
        });
        connect(process, &QProcess::errorOccurred, this, [this, i, process](QProcess::ProcessError error) {
            if (error != QProcess::FailedToStart) return; // a crash or a kill still ends in finished()
            done(i, 0, QStringLiteral("gdb did not start: %1").arg(process->errorString()));
            process->deleteLater();
        });
        QTimer::singleShot(timeoutMs, process, [process] {
            if (process->state() == QProcess::NotRunning) return;
            process->setProperty("timedOut", true);
            process->kill(); // finished() reports what it wrote
        });
        process->start(gdb, {QStringLiteral("-batch"), QStringLiteral("-nx"), QStringLiteral("-p"), QString::number(target.pid),
                             QStringLiteral("-ex"), QStringLiteral("thread apply all bt")});
    }
}

void StackDumps::done(int index, int threads, const QString& failure)
{
    const Target& target = m_targets.at(index);
    if (!m_summary.at(index).isEmpty()) return; // reported already (FailedToStart, then finished)
    if (failure.isEmpty()) {
        m_summary[index] = QStringLiteral("rank %1: %2 thread(s)' stacks in %3").arg(target.rank).arg(threads).arg(target.path);
    } else {
        QFile file(target.path);
        if (file.open(QIODevice::Append)) file.write(QStringLiteral("ringmaster: %1\n").arg(failure).toUtf8());
        m_summary[index] = threads > 0 ? QStringLiteral("rank %1: %2 thread(s)' stacks in %3 (%4)").arg(target.rank).arg(threads).arg(target.path, failure)
                                       : QStringLiteral("rank %1: no stacks (%2)").arg(target.rank).arg(failure);
    }
    if (--m_pending == 0) Q_EMIT finished(m_summary);
}

} // namespace ringmaster::supervisor
