#include "supervisor/slurm/slurm_verdict.h"

#include <algorithm>

#include "supervisor/slurm/task_failures.h"

namespace ringmaster::supervisor {

namespace {

// Slurm ended the job itself (time limit, memory, a node, scancel from outside Ringmaster): it signals
// every task, and srun reports them "Terminated", "Killed" or "Out Of Memory". Those reports are the
// consequence; the job's end is the cause, unless a task had already exited with a code of its own.
bool endedBySlurm(SlurmJobState state)
{
    return state == SlurmJobState::Timeout || state == SlurmJobState::OutOfMemory || state == SlurmJobState::NodeFail ||
           state == SlurmJobState::Cancelled;
}

QString srunWords(const TaskFailure& failure)
{
    return QStringLiteral("task %1 on %2: %3").arg(failure.task).arg(failure.host, failure.text);
}

} // namespace

void judgeSlurmFailure(const SlurmEnd& in, FailureVerdict* verdict)
{
    const QList<TaskFailure> failures = parseTaskFailures(in.batchLines);
    const bool anyExitCode = std::any_of(failures.cbegin(), failures.cend(), [](const TaskFailure& f) { return f.exitCode != 0; });
    const std::vector<QStringList> none;
    const std::vector<QStringList>& rankLines = in.rankLines ? *in.rankLines : none;
    auto linesOf = [&](int task) {
        return task >= 0 && task < static_cast<int>(rankLines.size()) ? rankLines[static_cast<std::size_t>(task)] : QStringList();
    };
    for (const TaskFailure& failure : failures) {
        if (endedBySlurm(in.status.state) && !anyExitCode) break;
        if (failure.task < 0 || failure.task >= static_cast<int>(rankLines.size())) continue;
        RankEnd end;
        end.exitCode = failure.exitCode;
        end.exitSignal = failure.exitSignal;
        end.trainerExitCodes = !in.script;
        const QStringList lines = linesOf(failure.task);
        // srun's --kill-on-bad-exit kills the others once one task exits non-zero: those are consequences.
        const FailurePriority priority = failure.exitSignal != 0 && anyExitCode
                                             ? FailurePriority::PeerCollateral
                                             : priorityOf(end, lines.mid(std::max<qsizetype>(0, lines.size() - 3)));
        // Words srun uses that name neither an exit code nor a signal are given as srun wrote them.
        const QString how = failure.exitCode == 0 && failure.exitSignal == 0 ? QStringLiteral("ended (srun: %1)").arg(failure.text)
                                                                             : describeEnd(end);
        verdict->consider(failure.task, QStringLiteral("%1 on %2").arg(how, failure.host), priority, end,
                          reportableLines(lines, kSlurmTailLinesInReport));
    }
    if (verdict->failed()) return;
    const SlurmJobStatus& status = in.status;
    RootCause cause;
    switch (status.state) {
    case SlurmJobState::Timeout:
        cause.reason = QStringLiteral("Slurm ended job %1 at its time limit (TIMEOUT): ask for more time with --time").arg(in.jobId);
        break;
    case SlurmJobState::Cancelled:
        cause.reason = QStringLiteral("Slurm job %1 was cancelled outside Ringmaster (scancel, or an administrator)").arg(in.jobId);
        break;
    case SlurmJobState::NodeFail:
        cause.reason = QStringLiteral("a node of Slurm job %1 failed (NODE_FAIL)").arg(in.jobId);
        break;
    case SlurmJobState::OutOfMemory:
        cause.reason = QStringLiteral("Slurm ended job %1 for using more memory than it asked for (OUT_OF_MEMORY): "
                                      "ask for more with --slurm-arg=--mem=SIZE").arg(in.jobId);
        break;
    case SlurmJobState::Gone:
        cause.reason = QStringLiteral("Slurm no longer knows job %1 (it ended without a record Ringmaster could read)").arg(in.jobId);
        break;
    default:
        cause.reason = QStringLiteral("Slurm job %1 ended as %2%3: see %4")
                           .arg(in.jobId, status.stateText,
                                status.exitCode > 0 ? QStringLiteral(" (batch script exit code %1)").arg(status.exitCode) : QString(),
                                in.batchLogPath);
        cause.lastLines = reportableLines(in.batchLines, kSlurmTailLinesInReport);
        break;
    }
    if (endedBySlurm(status.state) && !failures.isEmpty()) {
        // What srun saw of it, and the first named task's last lines (an out-of-memory task's, say).
        QStringList named;
        for (const TaskFailure& failure : failures) named << srunWords(failure);
        cause.reason += QStringLiteral(" (srun: %1)").arg(named.join(QStringLiteral("; ")));
        cause.lastLines = reportableLines(linesOf(failures.first().task), kSlurmTailLinesInReport);
    }
    verdict->setRootCause(cause);
}

} // namespace ringmaster::supervisor
