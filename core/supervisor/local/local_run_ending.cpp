// How a local run ends (local_run.h): a failing rank and the root cause weighed over a short window, Stop,
// Kill and Checkpoint now, the conclusion once every rank has exited (restart, port retry, or the final status
// in summary.json) and the run directory lost under a live run. Starting the group and following it is in
// local_run.cpp.
#include "supervisor/local/local_run.h"
#include "supervisor/local/local_run_rank.h"

#include <QFile>

#include <csignal>

#include <unistd.h>

#include "protocol/exit_codes.h"
#include "protocol/run_layout.h"
#include "protocol/wire.h"
#include "supervisor/metric_server.h"
#include "supervisor/proc_info.h"
#include "supervisor/rank_process.h"
#include "supervisor/stack_dumps.h"
#include "supervisor/system_files.h"

namespace ringmaster::supervisor {

void LocalRun::failDirectoryLost(const QString& reason)
{
    // Nothing the ranks write from now on can be kept, and a restart would only recreate a stub of the
    // folder: the group goes down at once and the run fails with the directory named.
    m_dirLost = true;
    RootCause cause;
    cause.reason = reason + QStringLiteral(": every rank was killed; its logs, metrics and checkpoints are gone");
    m_verdict.setRootCause(cause);
    m_verdictWindow.stop();
    m_escalation.stop();
    log(QStringLiteral("run failed: %1").arg(cause.reason));
    if (m_relaunch.isActive()) {   // between attempts (a restart's back-off): no rank to bring down, and no relaunch
        m_relaunch.stop();
        finishRun(RunState::Failed);
        return;
    }
    bringDown(SIGKILL, 0);
}

void LocalRun::considerFailure(int rank, const QString& reason, FailurePriority priority, const RankEnd& end)
{
    if (m_bringingDown && priority != FailurePriority::Hung) return; // consequences of our own bring-down
    // During a graceful stop a rank that fails is logged, but the others keep their grace period:
    // no verdict window, no second SIGTERM (which a trainer takes as "die now, skip the checkpoint").
    if (m_stopRequested) return;
    const QStringList lines = rank >= 0 && rank < static_cast<int>(m_ranks.size())
                                  ? reportableLines(m_ranks[static_cast<std::size_t>(rank)]->process->lastLines(200), kTailLinesInReport)
                                  : QStringList();
    if (!m_verdict.consider(rank, reason, priority, end, lines)) return;
    if (!m_verdictWindow.isActive() && priority != FailurePriority::Hung && !m_bringingDown) m_verdictWindow.start(kVerdictWindowMs);
}

void LocalRun::onRankFinished(int rank, int exitCode, int exitSignal)
{
    if (rank < 0 || rank >= static_cast<int>(m_ranks.size())) return;
    auto& r = *m_ranks[static_cast<std::size_t>(rank)];
    if (r.ended) return; // reported twice (a start failure, then an exit)
    r.ended = true;
    const bool clean = exitCode == 0 && exitSignal == 0;
    r.status.exitCode = exitCode;
    r.status.exitSignal = exitSignal;
    if (r.status.state != RankState::Hung) r.status.state = clean ? RankState::Exited : RankState::Failed;
    Q_EMIT rankChanged(rank);
    RankEnd end;
    end.exitCode = exitCode;
    end.exitSignal = exitSignal;
    end.signalSentByRingmaster = exitSignal != 0 && m_signalsSent.contains(exitSignal);
    end.peakRssKiB = r.status.peakRssKiB;
    end.trainerExitCodes = m_policy.trainerExitCodes;
    if (exitSignal == SIGKILL && !end.signalSentByRingmaster) {
        const auto evidence = m_oom.oomEvidence(r.status.pid);
        end.oomKilled = evidence == OomWatch::Evidence::KernelLogNamesIt;
        end.oomLikely = evidence == OomWatch::Evidence::CgroupCountRose;
    }
    const QString how = describeEnd(end);
    log(QStringLiteral("rank %1 (pid %2) %3").arg(rank).arg(r.status.pid).arg(how));
    if (!m_job.isScript() && !clean) {
        // A rank killed mid-write leaves NAME.tmp-PID (a partial file that is never read as a checkpoint).
        for (const QString& partial : m_dir.removeTempFilesOf(r.status.pid)) {
            log(QStringLiteral("removed %1, a partial file rank %2 was writing when it ended").arg(partial).arg(rank));
        }
    }
    if (!clean && !(m_stopRequested && m_bringingDown)) {
        considerFailure(rank, how, priorityOf(end, r.process->lastLines(3)), end);
    }
    concludeIfAllExited();
}

void LocalRun::killLeftovers()
{
    // Every rank has exited; what its programs started and left running (a data server that setsid()s out of the
    // group, a worker that ignores SIGTERM) still carries this run's socket in its environment, and dies with it.
    if (!m_server) return;
    const QByteArray marker = QByteArray(protocol::kSocketEnv) + '=' + QFile::encodeName(m_server->socketPath());
    QStringList killed;
    for (const qint64 pid : proc::processesWithEnvironment(marker)) {
        const QString name = proc::commandName(pid);
        if (proc::killIfStillHolds(pid, marker)) killed << QStringLiteral("%1 (%2)").arg(pid).arg(name);
    }
    if (!killed.isEmpty()) log(QStringLiteral("killed what the ranks left running: %1").arg(killed.join(QStringLiteral(", "))));
}

void LocalRun::signalRanks(int signal)
{
    // Once per rank: through the group while we own it, and directly only to a rank that is not in
    // it. A trainer takes a second SIGTERM as "die now", so a double delivery would skip its final checkpoint.
    m_signalsSent.insert(signal);
    const bool owned = ownsGroup();
    if (owned) ::kill(-m_group, signal);
    for (auto& rank : m_ranks) {
        const auto pid = static_cast<pid_t>(rank->process->pid());
        if (rank->process->isRunning() && pid > 0 && (!owned || ::getpgid(pid) != m_group)) ::kill(pid, signal);
    }
}

void LocalRun::bringDown(int signal, int escalateAfterMs)
{
    m_bringingDown = true;
    signalRanks(signal);
    if (signal != SIGKILL && escalateAfterMs >= 0) m_escalation.start(escalateAfterMs);
}

void LocalRun::requestStop()
{
    if (m_state != RunState::Starting && m_state != RunState::Running) return;
    m_stopRequested = true;
    if (m_relaunch.isActive()) {   // between attempts: no rank runs, so the run ends now rather than after its back-off
        m_relaunch.stop();
        log(QStringLiteral("stop requested while a restart was waiting: nothing is relaunched"));
        launchGroup();
        return;
    }
    setState(RunState::Stopping);
    log(QStringLiteral("stop requested: SIGTERM to every rank, SIGKILL after %1 s").arg(m_job.gracePeriodSec));
    signalRanks(SIGTERM);
    m_escalation.start(static_cast<int>(std::min(m_job.gracePeriodSec, kMaxGracePeriodSec) * 1000));
}

void LocalRun::kill()
{
    if (isFinal(m_state) || m_state == RunState::Idle) return;
    m_stopRequested = true;
    if (m_relaunch.isActive()) {
        m_relaunch.stop();
        launchGroup();
        return;
    }
    setState(RunState::Stopping);
    log(QStringLiteral("kill requested: SIGKILL to the process group"));
    bringDown(SIGKILL, 0);
}

void LocalRun::requestCheckpoint()
{
    if (m_ranks.empty() || !m_ranks.front()->process->isRunning()) return;
    log(QStringLiteral("checkpoint requested: SIGUSR1 to rank 0"));
    ::kill(static_cast<pid_t>(m_ranks.front()->process->pid()), SIGUSR1);
}

void LocalRun::concludeIfAllExited()
{
    // Every rank's end handled, not only every process gone: when ranks die together, the first end handled would
    // otherwise conclude the launch before the others' (a clean exit concluding "completed" while its peer's
    // failure still waits), and the last would conclude it a second time. Each end is handled once, so the
    // launch is concluded once, at its last.
    for (const auto& rank : m_ranks) {
        if (!rank->ended) return;
    }
    m_escalation.stop();
    m_verdictWindow.stop();
    m_stacks.reset(); // a hung group's dump that its ranks did not wait for (they all ended): its tools are killed
    sampleRanks(false);
    killLeftovers();
    if (!m_dirLost) {
        if (const QString lost = m_dir.lostReason(); !lost.isEmpty()) {
            m_dirLost = true;
            RootCause cause;
            cause.reason = lost + QStringLiteral(": its logs, metrics and checkpoints are gone");
            m_verdict.setRootCause(cause);
        }
    }
    if (m_dirLost) return finishRun(RunState::Failed); // no restart into a folder that is gone
    const RootCause cause = m_verdict.rootCause();
    if (m_verdict.failed() && !m_stopRequested) {
        // Another process took the rendezvous port after pre-flight picked it: not the job's fault.
        if (m_policy.trainerExitCodes && cause.exitCode == protocol::kTrainerExitAddressInUse && m_job.masterPort == 0 &&
            m_portRetries < kMaxPortRetries) {
            ++m_portRetries;
            if (relaunchAfter(QStringLiteral("rendezvous port %1 was taken by another process; retry %2 of %3 on a new port")
                                  .arg(m_masterPort).arg(m_portRetries).arg(kMaxPortRetries), false)) {
                return;
            }
        }
        // Bad input fails the same way every time: no restart.
        if (m_restarts < m_job.maxRestarts && !(m_policy.trainerExitCodes && cause.exitCode == protocol::kTrainerExitUsage)) {
            ++m_restarts;
            if (relaunchAfter(QStringLiteral("restart %1 of %2 after: %3").arg(m_restarts).arg(m_job.maxRestarts).arg(cause.summary()), true)) {
                return;
            }
        }
        finishRun(RunState::Failed);
        return;
    }
    // Every rank exited 0 and none failed: for a program that reports no status, that is completion.
    if (m_policy.completesOnCleanExit) return finishRun(m_stopRequested ? RunState::Stopped : RunState::Completed);
    // Rank 0 reports the end over the socket; if its last frames were lost, summary.json is the durable
    // record (not after a stop, when the file may still be an earlier segment's).
    QString status = m_finalStatus;
    if (status.isEmpty() && !m_stopRequested) status = m_dir.summaryStatus();
    if (status == QLatin1String(protocol::kStatusCompleted)) return finishRun(RunState::Completed);
    if (status == QLatin1String(protocol::kStatusStopped) || m_stopRequested) return finishRun(RunState::Stopped);
    RootCause missing;
    missing.rank = 0;
    missing.reason = QStringLiteral("exited without reporting completion (summary.json status '%1')").arg(status);
    m_verdict.setRootCause(missing);
    finishRun(RunState::Failed);
}

bool LocalRun::relaunchAfter(const QString& why, bool countsAsRestart)
{
    if (m_job.masterPort == 0 || !countsAsRestart) {
        const int port = pickFreePort();
        if (port == 0) {
            log(QStringLiteral("no free TCP port on 127.0.0.1 to relaunch on"));
            return false;
        }
        m_masterPort = port;
    }
    // A restart backs off, 1 s, 2 s, 4 s ... up to kMaxRestartBackoffMs, so a run that fails at once does not
    // relaunch in a tight loop; a port retry is not the job's fault and relaunches at once.
    const int backoffMs = countsAsRestart ? restartBackoffMs(m_restarts) : 0;
    log(backoffMs > 0 ? QStringLiteral("%1 (relaunching in %2 s)").arg(why).arg(backoffMs / 1000) : why);
    m_verdict.reset();
    setState(RunState::Starting);
    // Not from inside the finished signal of a process we are about to destroy.
    m_relaunch.start(backoffMs);
    return true;
}

void LocalRun::finishRun(RunState state)
{
    m_watchdog.stop();
    RunDirectory::Outcome outcome;
    outcome.state = state;
    outcome.restarts = m_restarts;
    outcome.worldSize = m_job.worldSize();
    outcome.supervisorOwnsSummary = !m_policy.programWritesSummary;
    QStringList sampling;
    if (m_systemSampler && m_systemSampler->secondsAlive() > 0) {
        sampling << QStringLiteral("system metrics: %1 sample(s) in %2; sampling used %3% of one core")
                        .arg(m_systemSampler->ticks()).arg(QLatin1String(protocol::kSystemFile))
                        .arg(100.0 * m_systemSampler->cpuSecondsUsed() / m_systemSampler->secondsAlive(), 0, 'f', 3);
    }
    concludeRun(outcome,
                QStringLiteral("run %1 after %2 restart(s); %3 step metrics received over the socket")
                    .arg(runStateName(state)).arg(m_restarts).arg(m_stepsReceived),
                sampling);
}

} // namespace ringmaster::supervisor
