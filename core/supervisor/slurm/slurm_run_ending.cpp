// How a Slurm run ends (slurm_run.h): Stop, Kill and Checkpoint now, leaving the job to Slurm, and the
// conclusion once Slurm says the job is over. The rest of SlurmRun, from submission to following the
// job, is in slurm_run.cpp.
#include "supervisor/slurm/slurm_run.h"

#include <QRegularExpression>

#include <algorithm>
#include <csignal>

#include "protocol/wire.h"
#include "supervisor/metric_server.h"
#include "supervisor/stack_dumps.h"
#include "supervisor/tensorboard_follower.h"
#include "supervisor/slurm/batch_script.h"
#include "supervisor/slurm/slurm_verdict.h"
#include "supervisor/slurm/task_failures.h"

namespace ringmaster::supervisor {

QString attachCommandLine(const QString& runDir)
{
    static const QRegularExpression plain(QStringLiteral("^[A-Za-z0-9_@%+=:,./-]+$"));
    return QStringLiteral("ringmaster-launch --attach ") + (plain.match(runDir).hasMatch() ? runDir : shellQuote(runDir));
}

QString SlurmRun::leaveRunning()
{
    if (m_left || m_jobId.isEmpty() || m_stopRequested || (m_state != RunState::Starting && m_state != RunState::Running)) return {};
    m_left = true;
    m_pollTimer.stop();
    m_followTimer.stop();
    m_escalation.stop();
    follow();   // what the logs hold until now reaches the front end and scalars.csv
    if (m_tensorboard) m_tensorboard->stop();
    m_server.reset();   // rank 0 carries on without its connection; an attach reads the files
    const QString line = QStringLiteral("left running in Slurm job %1 (%2): follow it again with %3")
                             .arg(m_jobId, m_queueText.isEmpty() ? QStringLiteral("submitted") : m_queueText, attachCommandLine(runDir()));
    m_dir.log(line);
    return line;
}

void SlurmRun::conclude(const SlurmJobStatus& status)
{
    m_stacks.reset(); // a dump the job did not wait for (it ended): its tools are stopped
    m_pollTimer.stop();
    m_escalation.stop();
    follow(); // what the tasks wrote last
    m_followTimer.stop();
    RunState state = RunState::Failed;
    const QString reported = m_job.isScript() ? QString() : (m_finalStatus.isEmpty() ? m_dir.summaryStatus() : m_finalStatus);
    if (reported == QLatin1String(protocol::kStatusCompleted)) {
        state = RunState::Completed;
    } else if (m_hung.rank >= 0) {
        // Cancelled by this launcher for the hang, whatever Slurm calls it and whatever the other ranks wrote on the
        // way out (the cancel's SIGTERM has the trainer write "stopped").
        m_verdict.setRootCause(m_hung);
    } else if (m_stopRequested || reported == QLatin1String(protocol::kStatusStopped)) {
        state = RunState::Stopped;
    } else if (status.state == SlurmJobState::Completed) {
        if (m_job.isScript()) {
            state = RunState::Completed;
        } else {
            RootCause missing;
            missing.rank = 0;
            missing.reason = QStringLiteral("exited without reporting completion (summary.json status '%1')").arg(reported);
            m_verdict.setRootCause(missing);
        }
    } else {
        judgeFailure(status);
    }
    const QList<TaskFailure> failures = parseTaskFailures(m_batchLines);
    for (RankStatus& rank : m_ranks) {
        rank.state = RankState::Exited;
        for (const TaskFailure& failure : failures) {
            if (failure.task != rank.rank) continue;
            rank.state = RankState::Failed;
            rank.exitCode = failure.exitCode;
            rank.exitSignal = failure.exitSignal;
        }
        if (rank.rank == m_hung.rank) rank.state = RankState::Hung;
        Q_EMIT rankChanged(rank.rank);
    }
    RunDirectory::Outcome outcome;
    outcome.state = state;
    outcome.worldSize = static_cast<int>(m_ranks.size());
    outcome.supervisorOwnsSummary = m_job.isScript();
    concludeRun(outcome, QStringLiteral("run %1 (Slurm job %2 %3); %4 step metrics received %5")
                             .arg(runStateName(state), m_jobId, status.stateText).arg(m_stepsReceived)
                             .arg(m_followCsv ? QStringLiteral("from metrics.csv")
                                              : m_liveTransport.isEmpty() ? QStringLiteral("(no live connection)")
                                                                          : QStringLiteral("over ") + m_liveTransport));
}

void SlurmRun::watchForHang()
{
    if (m_hung.rank >= 0 || m_stopRequested || m_cancelSent || m_state != RunState::Running || m_job.isScript()) return;
    if (!m_queueText.startsWith(QLatin1String("RUNNING"))) return; // Slurm's latest word: the tasks run now
    const auto limitMs = static_cast<qint64>(m_job.heartbeatTimeoutSec * 1000);
    if (limitMs <= 0) return;
    int culprit = -1;
    qint64 longest = -1;
    QStringList silent;
    for (std::size_t r = 0; r < m_sinceBeat.size(); ++r) {
        if (!m_sinceBeat[r].isValid() || m_sinceBeat[r].elapsed() <= limitMs) continue;
        silent << QString::number(r);
        if (m_sinceBeat[r].elapsed() > longest) {
            longest = m_sinceBeat[r].elapsed();
            culprit = static_cast<int>(r);
        }
    }
    if (culprit < 0) return;
    m_hung.rank = culprit;
    const bool located = !commandOnNodeOf(culprit).isEmpty();
    m_hung.reason = QStringLiteral("stopped heartbeating for %1 s (hung; silent ranks: %2)%3")
                        .arg(m_job.heartbeatTimeoutSec).arg(silent.join(QStringLiteral(", ")))
                        .arg(located ? QStringLiteral("; its threads' stacks: %1").arg(m_dir.rankStacks(culprit)) : QString());
    if (static_cast<std::size_t>(culprit) < m_lastLines.size()) m_hung.lastLines = m_lastLines[static_cast<std::size_t>(culprit)];
    m_verdict.setRootCause(m_hung);
    m_ranks[culprit].state = RankState::Hung;
    Q_EMIT rankChanged(culprit); // the run's `hung` event (run_event.h)
    dumpStacksThenCancel();
}

QStringList SlurmRun::commandOnNodeOf(int rank) const
{
    if (rank < 0 || static_cast<std::size_t>(rank) >= m_whereabouts.size()) return {};
    const RankWhereabouts& where = m_whereabouts[static_cast<std::size_t>(rank)];
    return where.pid > 0 ? m_client.commandOnNode(m_jobId, where.node) : QStringList();
}

void SlurmRun::dumpStacksThenCancel()
{
    // Each rank that said where it runs gets gdb on its node, as one more step of the job beside its tasks; the
    // job is cancelled once they are taken, which StackDumps bounds whatever srun or gdb do.
    QList<StackDumps::Target> targets;
    for (std::size_t r = 0; r < m_whereabouts.size(); ++r) {
        const QStringList via = commandOnNodeOf(static_cast<int>(r));
        if (via.isEmpty()) continue;
        StackDumps::Target target;
        target.rank = static_cast<int>(r);
        target.pid = m_whereabouts[r].pid;
        target.path = m_dir.rankStacks(target.rank);
        target.via = via;
        targets.append(target);
    }
    const auto cancel = [this] {
        if (isFinal(m_state)) return; // the job ended while its stacks were taken
        log(QStringLiteral("rank %1 %2: cancelling Slurm job %3 (scancel)").arg(m_hung.rank).arg(m_hung.reason, m_jobId));
        m_cancelSent = true;
        runAsync(QStringLiteral("scancel"), [id = m_jobId](const SlurmClient& client) { return client.kill(id); });
    };
    if (targets.isEmpty()) {
        log(QStringLiteral("no rank said which node it runs on: no stacks taken"));
        cancel();
        return;
    }
    log(QStringLiteral("rank %1 is hung: taking every rank's stacks on its node (srun gdb), then cancelling Slurm job %2")
            .arg(m_hung.rank).arg(m_jobId));
    m_stacks = std::make_unique<StackDumps>();
    connect(m_stacks.get(), &StackDumps::finished, this, [this, cancel](const QStringList& summary) {
        for (const QString& line : summary) log(line);
        m_stacks.release()->deleteLater(); // not deleted inside its own signal
        cancel();
    });
    m_stacks->start(targets);
}

void SlurmRun::judgeFailure(const SlurmJobStatus& status)
{
    SlurmEnd end;
    end.status = status;
    end.jobId = m_jobId;
    end.batchLogPath = m_batchLog.path();
    end.batchLines = m_batchLines;
    end.rankLines = &m_lastLines;
    end.script = m_job.isScript();
    judgeSlurmFailure(end, &m_verdict);
}

void SlurmRun::requestStop()
{
    if (m_state != RunState::Starting && m_state != RunState::Running) return;
    m_stopRequested = true;
    setState(RunState::Stopping);
    if (m_jobId.isEmpty()) {
        log(QStringLiteral("stop requested while submitting: the job is cancelled once Slurm gives it an id"));
        return;
    }
    if (!m_sawRunning) {
        log(QStringLiteral("stop requested while queued: cancelling Slurm job %1").arg(m_jobId));
        m_cancelSent = true;
        runAsync(QStringLiteral("scancel"), [id = m_jobId](const SlurmClient& client) { return client.kill(id); });
        return;
    }
    const double grace = std::min(m_job.gracePeriodSec, kMaxGracePeriodSec);
    log(QStringLiteral("stop requested: SIGTERM to every task of Slurm job %1 (scancel --signal=TERM); cancelled after %2 s")
            .arg(m_jobId).arg(grace));
    // A job whose step has not started yet has no task to signal: then it is cancelled at once.
    runAsync(QStringLiteral("scancel"), [id = m_jobId](const SlurmClient& client) {
        const QString error = client.stop(id);
        return error.isEmpty() ? error : client.kill(id);
    });
    m_escalation.start(static_cast<int>(grace * 1000));
}

void SlurmRun::kill()
{
    if (isFinal(m_state) || m_state == RunState::Idle) return;
    m_stopRequested = true;
    setState(RunState::Stopping);
    if (m_jobId.isEmpty()) return; // cancelled in onSubmitted
    log(QStringLiteral("kill requested: cancelling Slurm job %1 (scancel)").arg(m_jobId));
    m_cancelSent = true;
    runAsync(QStringLiteral("scancel"), [id = m_jobId](const SlurmClient& client) { return client.kill(id); });
}

void SlurmRun::requestCheckpoint()
{
    // Rank 0 connected to this host's Unix socket, so it runs here and its pid is ours to signal.
    if (m_rank0Pid > 0 && ::kill(static_cast<pid_t>(m_rank0Pid), 0) == 0) {
        log(QStringLiteral("checkpoint requested: SIGUSR1 to rank 0 (pid %1)").arg(m_rank0Pid));
        ::kill(static_cast<pid_t>(m_rank0Pid), SIGUSR1);
        return;
    }
    log(QStringLiteral("checkpoint now needs rank 0 on this host, and it has not reported here (Slurm job %1): "
                       "its checkpoints come every --checkpoint-every steps").arg(m_jobId));
}

} // namespace ringmaster::supervisor
