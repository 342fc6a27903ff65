#include "supervisor/slurm/task_failures.h"

#include <QRegularExpression>
#include <QSet>

#include <csignal>

namespace ringmaster::supervisor {
namespace {

// "0,2-3" -> 0, 2, 3 (at most kMaxTasks, so a malformed range cannot make a huge list).
QList<int> taskList(const QString& text)
{
    constexpr int kMaxTasks = 4096;
    QList<int> tasks;
    for (const QString& part : text.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const auto dash = part.indexOf(QLatin1Char('-'));
        bool okFirst = false, okLast = false;
        const int first = (dash < 0 ? part : part.left(dash)).toInt(&okFirst);
        const int last = dash < 0 ? first : part.mid(dash + 1).toInt(&okLast);
        if (!okFirst || (dash >= 0 && !okLast) || last < first) continue;
        for (int t = first; t <= last && tasks.size() < kMaxTasks; ++t) tasks.append(t);
    }
    return tasks;
}

int signalOf(const QString& words)
{
    static const QList<QPair<QString, int>> names{
        {QStringLiteral("Killed"), SIGKILL},        {QStringLiteral("Terminated"), SIGTERM},
        {QStringLiteral("Segmentation fault"), SIGSEGV}, {QStringLiteral("Aborted"), SIGABRT},
        {QStringLiteral("Bus error"), SIGBUS},      {QStringLiteral("Floating point exception"), SIGFPE},
        {QStringLiteral("Interrupt"), SIGINT},      {QStringLiteral("Hangup"), SIGHUP},
    };
    for (const auto& [name, signal] : names) {
        if (words.startsWith(name)) return signal;
    }
    return 0;
}

} // namespace

QList<TaskFailure> parseTaskFailures(const QStringList& batchLogLines)
{
    static const QRegularExpression line(QStringLiteral("^srun: error: (\\S+): tasks? ([0-9,\\-]+): (.+)$"));
    static const QRegularExpression exited(QStringLiteral("^Exited with exit code (\\d+)"));
    QList<TaskFailure> failures;
    QSet<int> seen;
    for (const QString& text : batchLogLines) {
        const auto m = line.match(text.trimmed());
        if (!m.hasMatch()) continue;
        const QString words = m.captured(3).trimmed();
        for (const int task : taskList(m.captured(2))) {
            if (seen.contains(task)) continue;
            seen.insert(task);
            TaskFailure failure;
            failure.task = task;
            failure.host = m.captured(1).chopped(m.captured(1).endsWith(QLatin1Char(':')) ? 1 : 0);
            failure.text = words;
            if (const auto code = exited.match(words); code.hasMatch()) failure.exitCode = code.captured(1).toInt();
            else failure.exitSignal = signalOf(words);
            failures.append(failure);
        }
    }
    return failures;
}

} // namespace ringmaster::supervisor
