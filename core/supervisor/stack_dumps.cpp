#include "stack_dumps.h"

#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>
#include <QVariant>

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

// The last line of a tool's output, which says why it has no stack (e.g. "ptrace: Operation not permitted.").
QString lastLineOf(const QByteArray& output)
{
    const QList<QByteArray> lines = output.trimmed().split('\n');
    return lines.isEmpty() ? QString() : QString::fromUtf8(lines.last()).trimmed();
}

void writeFile(const QString& path, const QByteArray& bytes, QIODevice::OpenMode mode)
{
    QFile file(path);
    if (file.open(QIODevice::WriteOnly | mode)) file.write(bytes);
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
    const QString gdb = debugger();
    for (int i = 0; i < static_cast<int>(targets.size()); ++i) {
        if (gdb.isEmpty()) {
            QTimer::singleShot(0, this, [this, i] { afterGdb(i, {}, QStringLiteral("gdb is not installed: apt install gdb")); });
            continue;
        }
        run(gdb, {QStringLiteral("-batch"), QStringLiteral("-nx"), QStringLiteral("-p"), QString::number(targets.at(i).pid),
                  QStringLiteral("-ex"), QStringLiteral("thread apply all bt")},
            [this, i](const QByteArray& output, const QString& trouble) { afterGdb(i, output, trouble); });
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
    const Target& target = m_targets.at(index);
    Result& result = m_results[index];
    result.threads = threadsIn(output);
    result.trouble = !trouble.isEmpty() ? trouble
                     : result.threads == 0 ? QStringLiteral("gdb: %1").arg(lastLineOf(output))
                                           : QString();
    writeFile(target.path, output + (result.trouble.isEmpty() ? QByteArray() : QStringLiteral("ringmaster: %1\n").arg(result.trouble).toUtf8()),
              QIODevice::Truncate);
    if (target.pythonSpy.isEmpty()) {
        finish(index);
        return;
    }
    run(target.pythonSpy, {QStringLiteral("dump"), QStringLiteral("--pid"), QString::number(target.pid)},
        [this, index](const QByteArray& pyOutput, const QString& pyTrouble) {
            Result& r = m_results[index];
            r.pythonThreads = threadsIn(pyOutput);
            const QString failure = !pyTrouble.isEmpty() ? pyTrouble
                                    : r.pythonThreads == 0 ? QStringLiteral("py-spy: %1").arg(lastLineOf(pyOutput))
                                                           : QString();
            if (!failure.isEmpty()) r.trouble += (r.trouble.isEmpty() ? QString() : QStringLiteral("; ")) + failure;
            writeFile(m_targets.at(index).path,
                      "\nringmaster: the Python stacks (py-spy dump):\n" + pyOutput +
                          (failure.isEmpty() ? QByteArray() : QStringLiteral("ringmaster: %1\n").arg(failure).toUtf8()),
                      QIODevice::Append);
            finish(index);
        });
}

void StackDumps::finish(int index)
{
    const Target& target = m_targets.at(index);
    const Result& result = m_results.at(index);
    QString line = result.threads > 0 || result.pythonThreads > 0
                       ? QStringLiteral("rank %1: %2 thread(s)' stacks").arg(target.rank).arg(result.threads)
                       : QStringLiteral("rank %1: no stacks").arg(target.rank);
    if (result.pythonThreads > 0) line += QStringLiteral(", %1 Python thread(s)").arg(result.pythonThreads);
    if (result.threads > 0 || result.pythonThreads > 0) line += QStringLiteral(" in %1").arg(target.path);
    if (!result.trouble.isEmpty()) line += QStringLiteral(" (%1)").arg(result.trouble);
    m_summary[index] = line;
    if (--m_pending == 0) Q_EMIT finished(m_summary);
}

} // namespace ringmaster::supervisor
