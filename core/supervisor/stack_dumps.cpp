#include "stack_dumps.h"

#include <QDateTime>
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
    // each round of kMaxConcurrent targets runs gdb, then py-spy, each bounded by timeoutMs.
    const int rounds = (static_cast<int>(targets.size()) + kMaxConcurrent - 1) / kMaxConcurrent;
    QTimer::singleShot(rounds * 2 * timeoutMs + kDeadlineMarginMs, this, [this] {
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
    const QString gdb = debugger();
    const QString header = QStringLiteral("==== %1: every thread's stack of rank %2 (pid %3), taken by Ringmaster\n")
                               .arg(QDateTime::currentDateTime().toString(Qt::ISODateWithMs))
                               .arg(m_targets.at(index).rank)
                               .arg(m_targets.at(index).pid);
    append(index, header.toUtf8());
    if (gdb.isEmpty()) {
        QTimer::singleShot(0, this, [this, index] { afterGdb(index, {}, QStringLiteral("gdb is not installed: apt install gdb")); });
        return;
    }
    run(gdb, {QStringLiteral("-batch"), QStringLiteral("-nx"), QStringLiteral("-p"), QString::number(m_targets.at(index).pid),
              QStringLiteral("-ex"), QStringLiteral("thread apply all bt")},
        [this, index](const QByteArray& output, const QString& trouble) { afterGdb(index, output, trouble); });
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
            r.pythonThreads = threadsIn(pyOutput);
            const QString pyFailure = !pyTrouble.isEmpty() ? pyTrouble
                                      : r.pythonThreads == 0 ? QStringLiteral("py-spy: %1").arg(lastLineOf(pyOutput))
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
    QString line = result.threads > 0 || result.pythonThreads > 0
                       ? QStringLiteral("rank %1: %2 thread(s)' stacks").arg(target.rank).arg(result.threads)
                       : QStringLiteral("rank %1: no stacks").arg(target.rank);
    if (result.pythonThreads > 0) line += QStringLiteral(", %1 Python thread(s)").arg(result.pythonThreads);
    if (result.threads > 0 || result.pythonThreads > 0) line += QStringLiteral(" in %1").arg(target.path);
    if (!result.trouble.isEmpty()) line += QStringLiteral(" (%1)").arg(result.trouble);
    m_summary[index] = line;
    if (!m_queue.isEmpty()) startNext();
    if (--m_pending == 0) Q_EMIT finished(m_summary);
}

} // namespace ringmaster::supervisor
