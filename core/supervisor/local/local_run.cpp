#include "supervisor/local/local_run.h"
#include "supervisor/local/local_run_rank.h"

#include <QDir>
#include <QFile>
#include <QJsonObject>

#include <csignal>
#include <limits>

#include <unistd.h>

#include "protocol/exit_codes.h"
#include "protocol/run_layout.h"
#include "protocol/wire.h"
#include "supervisor/metric_server.h"
#include "supervisor/proc_info.h"
#include "supervisor/rank_command.h"
#include "supervisor/rank_process.h"
#include "supervisor/script_environment.h"
#include "supervisor/stack_dumps.h"
#include "supervisor/system_files.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kWatchdogIntervalMs = 250;
// Failure bring-down: SIGTERM, then SIGKILL after this long (peers blocked in a collective ignore SIGTERM).
constexpr int kFailureGraceMs = 2000;
constexpr int kReapTimeoutMs = 5000;

} // namespace

LocalRun::LocalRun(QObject* parent)
    : RunBackendBase(parent)
{
    m_watchdog.setInterval(kWatchdogIntervalMs);
    connect(&m_watchdog, &QTimer::timeout, this, &LocalRun::onWatchdog);
    connect(&m_escalation, &QTimer::timeout, this, [this] {
        log(QStringLiteral("grace period over: SIGKILL to the process group"));
        bringDown(SIGKILL, 0);
    });
    m_relaunch.setSingleShot(true);
    m_relaunch.setTimerType(Qt::PreciseTimer); // a back-off is a promise: never early (a coarse timer may be 5% so)
    connect(&m_relaunch, &QTimer::timeout, this, &LocalRun::launchGroup);
    m_verdictWindow.setSingleShot(true);
    connect(&m_verdictWindow, &QTimer::timeout, this, [this] {
        log(QStringLiteral("run failed: %1; bringing the group down").arg(m_verdict.rootCause().summary()));
        bringDown(SIGTERM, kFailureGraceMs);
    });
}

LocalRun::~LocalRun()
{
    // No trainer outlives its supervisor. The group id is signalled only while one of our ranks is
    // unreaped: after that the id may belong to an unrelated group of the same user. Nothing the
    // dying ranks report reaches this half-destroyed object (no verdict, no summary rewrite).
    ++m_launchGeneration;
    for (auto& rank : m_ranks) rank->process->disconnect(this);
    if (ownsGroup()) ::kill(-m_group, SIGKILL);
    for (auto& rank : m_ranks) {
        if (rank->process && rank->process->isRunning() && rank->process->pid() > 0) {
            ::kill(static_cast<pid_t>(rank->process->pid()), SIGKILL);
            rank->process->waitForFinished(kReapTimeoutMs);
        }
    }
    killLeftovers();
    // A run cut short this way says so in summary.json ("stopped", and why) instead of keeping no status
    // (or an earlier segment's): the window or launcher that owned it was closed mid-run.
    if (m_state == RunState::Starting || m_state == RunState::Running || m_state == RunState::Stopping) {
        if (!m_job.isScript()) {
            for (const auto& rank : m_ranks) m_dir.removeTempFilesOf(rank->status.pid);
        }
        RunDirectory::Outcome outcome;
        outcome.state = RunState::Stopped;
        outcome.message = QStringLiteral("the Ringmaster window or launcher that ran it was closed while the run was %1: "
                                         "every rank was killed, without a final checkpoint")
                              .arg(runStateName(m_state));
        outcome.restarts = m_restarts;
        outcome.stragglers = m_stragglers;
        outcome.worldSize = m_job.worldSize();
        outcome.metricsReceived = m_stepsReceived;
        outcome.supervisorOwnsSummary = !m_policy.programWritesSummary;
        // Only with the final status on disk may the run be resumed, by this process or another.
        if (m_dir.patchSummary(outcome)) m_dir.releaseRunLock();
        m_dir.log(QStringLiteral("state: stopped (%1)").arg(outcome.message));
    }
}

QList<RankStatus> LocalRun::ranks() const
{
    QList<RankStatus> list;
    for (const auto& rank : m_ranks) {
        RankStatus status = rank->status;
        status.msSinceHeartbeat = rank->sinceHeartbeat.isValid() ? rank->sinceHeartbeat.elapsed() : -1;
        list.append(status);
    }
    return list;
}

qint64 LocalRun::processGroup() const
{
    return ownsGroup() ? m_group : 0;
}

bool LocalRun::ownsGroup() const
{
    if (m_group <= 0) return false;
    for (const auto& rank : m_ranks) {
        if (rank->process->isRunning()) return true;
    }
    return false;
}

bool LocalRun::start(const JobSpec& job, const PreflightResult& checked, QString* error)
{
    if (m_state != RunState::Idle && !isFinal(m_state)) {
        *error = QStringLiteral("a run is already active in %1").arg(runDir());
        return false;
    }
    if (!checked.ok()) {
        *error = checked.error;
        return false;
    }
    adoptJob(job, checked);
    m_policy = launchPolicy(m_job);
    m_masterPort = checked.masterPort;
    m_server = std::make_unique<MetricServer>();
    m_server->setPeerCheck([this](int rank, qint64 pid) { return acceptsPeer(rank, pid); });
    if (!m_server->listen()) {
        *error = m_server->error();
        return false;
    }
    watchWrites();
    if (!m_dir.prepare(m_job, m_masterPort, checked.trainerPath, error, /*holdRunLock=*/true)) return false;
    openScalarRecord();
    m_systemFiles = std::make_unique<SystemFiles>(m_dir);
    m_systemSampler = std::make_unique<SystemSampler>();
    connect(m_systemSampler.get(), &SystemSampler::sampled, this, &LocalRun::onSystemSampled);
    m_lastScalarStep = -1;
    m_lastScalars.clear();
    connectServer();
    followTensorBoard();

    // Nothing of a previous run in this supervisor may leak into this one's verdict.
    m_verdict.reset();
    m_stopRequested = false;
    m_dirLost = false;
    m_restarts = 0;
    m_portRetries = 0;
    m_stepsReceived = 0;
    m_totalSteps = 0;
    m_stepsPerEpoch = 0;
    log(QStringLiteral("run directory %1; socket %2; master port %3; %4")
            .arg(runDir(), m_server->socketPath()).arg(m_masterPort)
            .arg(m_job.isScript() ? QStringLiteral("script %1; interpreter %2 (torch %3); hang detection %4")
                                        .arg(checked.scriptPath, checked.interpreterPath, checked.torchVersion,
                                             m_policy.hangTimeoutSec > 0 ? QStringLiteral("after %1 s without output").arg(m_policy.hangTimeoutSec)
                                                                         : QStringLiteral("off"))
                                  : QStringLiteral("trainer %1 (%2)").arg(checked.trainerPath, checked.trainer.summary())));
    setState(RunState::Starting);
    launchGroup();
    m_watchdog.start();
    return true;
}

void LocalRun::connectServer()
{
    connect(m_server.get(), &MetricServer::stepReceived, this, [this](const StepMetric& metric) {
        ++m_stepsReceived;
        if (m_state == RunState::Starting) setState(RunState::Running);
        recordScalars(scalarsOf(metric));
        Q_EMIT stepReceived(metric);
    });
    connect(m_server.get(), &MetricServer::evalReceived, this, [this](const EvalMetric& metric) {
        recordScalars(scalarsOf(metric));
        Q_EMIT evalReceived(metric);
    });
    connect(m_server.get(), &MetricServer::scalarsReceived, this, [this](const ScalarBatch& scalars) { recordScalars(scalars); });
    connect(m_server.get(), &MetricServer::checkpointReceived, this, &LocalRun::checkpointSaved);
    connect(m_server.get(), &MetricServer::heartbeatReceived, this, &LocalRun::onHeartbeat);
    connect(m_server.get(), &MetricServer::statusReceived, this, &LocalRun::onStatus);
    connect(m_server.get(), &MetricServer::notice, this, &LocalRun::log);
}

void LocalRun::scalarsArriving()
{
    // Rank 0 sends a script's reports, and group-wide progress covers the others.
    if (m_policy.outputIsProgress && !m_ranks.empty() && !isFinal(m_state)) onHeartbeat(0, -1, QString());
}

bool LocalRun::acceptsPeer(int rank, qint64 pid) const
{
    if (rank < 0 || rank >= static_cast<int>(m_ranks.size())) return false;
    const qint64 rankPid = m_ranks[static_cast<std::size_t>(rank)]->process->pid();
    return rankPid > 0 && m_ranks[static_cast<std::size_t>(rank)]->process->isRunning() && proc::isSelfOrDescendant(pid, rankPid);
}

void LocalRun::launchGroup()
{
    // A stop (Ctrl-C, Stop, Kill) that arrived while a relaunch was queued wins over the relaunch.
    if (m_stopRequested) {
        m_ranks.clear();
        finishRun(RunState::Stopped);
        return;
    }
    if (m_dirLost) { // never a relaunch into a folder that is gone
        m_ranks.clear();
        finishRun(RunState::Failed);
        return;
    }
    const int generation = ++m_launchGeneration;
    m_ranks.clear();
    m_oom.clear();
    m_signalsSent.clear();
    m_finalStatus.clear();
    m_group = 0;
    m_bringingDown = false;
    m_escalation.stop();
    const int world = m_job.worldSize();
    const bool cuda = m_job.device == QLatin1String("cuda");

    LaunchContext context;
    context.runDir = runDir();
    context.jobFile = m_dir.jobFile();
    context.masterPort = m_masterPort;
    context.socketPath = m_server->socketPath();
    context.token = m_server->token();
    context.restartCount = m_restarts;
    context.resumeFrom = trainerResumeTarget(m_job, m_restarts, runDir(), m_dir.latestCheckpoint());
    if (!context.resumeFrom.isEmpty()) log(QStringLiteral("resuming from %1").arg(context.resumeFrom));
    const QProcessEnvironment base = QProcessEnvironment::systemEnvironment();
    QString command;
    QList<RankCommand> started;
    for (int r = 0; r < world; ++r) {
        // An earlier attempt's exception (@record) is not this attempt's.
        if (m_job.isScript()) QFile::remove(errorFileOf(runDir(), QString::number(r)));
        auto rank = std::make_unique<Rank>();
        rank->status.rank = r;
        rank->status.gpu = cuda ? m_checked.gpus.value(r, -1) : -1;
        rank->status.state = RankState::Starting;
        rank->process = std::make_unique<RankProcess>(r, m_dir.rankLog(r));
        rank->process->setWriteFailureHandler([this](const QString& path, const QString& why) { m_dir.reportWriteFailure(path, why); });
        RankProcess* process = rank->process.get();
        rank->sinceHeartbeat.start();
        m_ranks.push_back(std::move(rank));
        connect(process, &RankProcess::lineLogged, this, &LocalRun::logLine);
        if (r == 0 && m_lineParser.enabled()) {
            connect(process, &RankProcess::lineLogged, this, [this](int, const QString& line) {
                ScalarBatch scalars;
                if (m_lineParser.parseLine(line, &scalars)) recordScalars(scalars);
            });
        }
        if (m_policy.outputIsProgress) {
            connect(process, &RankProcess::lineLogged, this, [this, generation](int printed) {
                if (generation == m_launchGeneration) onHeartbeat(printed, -1, QString());
            });
        }
        // Queued: an end reported while start() runs is handled once every rank of the launch is
        // known; the generation drops what a previous launch's ranks reported late.
        connect(process, &RankProcess::finished, this, [this, generation](int ended, int exitCode, int exitSignal) {
            if (generation == m_launchGeneration) onRankFinished(ended, exitCode, exitSignal);
        }, Qt::QueuedConnection);
        connect(process, &RankProcess::failedToStart, this, [this, generation](int failed, const QString& why) {
            if (generation != m_launchGeneration) return;
            considerFailure(failed, QStringLiteral("could not be started: %1").arg(why), FailurePriority::OtherExit, {});
            onRankFinished(failed, -1, 0);
        }, Qt::QueuedConnection);
        if (r > 0 && m_group == 0) {
            // Rank 0 did not start, so there is no group to join: the others are not started at all.
            m_ranks.back()->status.state = RankState::Failed;
            m_ranks.back()->ended = true;
            Q_EMIT rankChanged(r);
            continue;
        }
        const RankCommand rankCommand = commandFor(m_job, m_checked, r, context, base);
        command = describeCommand(rankCommand);
        started.append(rankCommand);
        // Rank 0 founds the job's process group; start() returns after exec, so the group exists
        // when the next rank joins it.
        process->start(rankCommand.program, rankCommand.arguments, rankCommand.environment, m_group);
        m_ranks.back()->status.pid = process->pid();
        if (r == 0 && process->pid() > 0 && process->isRunning()) m_group = static_cast<pid_t>(process->pid());
        if (process->pid() > 0) m_oom.track(process->pid());
        Q_EMIT rankChanged(r);
    }
    m_dir.writeCommands(launchRecord(started, m_restarts, base, hardwareRecord(m_checked)));
    log(QStringLiteral("started %1 rank(s) in process group %2: %3").arg(world).arg(m_group).arg(command));
    sampleRanks(true);
    // A program that reports nothing over the socket is running once it is started.
    if (!m_policy.heartbeatsOverSocket && m_group != 0 && m_state == RunState::Starting) setState(RunState::Running);
}

void LocalRun::onHeartbeat(int rank, qint64 step, const QString& phase, const StepTiming& timing)
{
    if (rank < 0 || rank >= static_cast<int>(m_ranks.size())) {
        log(QStringLiteral("ignored a heartbeat from rank %1, outside the world of %2").arg(rank).arg(m_ranks.size()));
        return;
    }
    auto& r = *m_ranks[static_cast<std::size_t>(rank)];
    r.sinceHeartbeat.restart();
    if (step >= 0) r.status.step = step; // -1: a line of output, which counts as progress but has no step
    if (!phase.isEmpty()) r.status.phase = phase;
    if (timing.valid()) r.status.timing = timing;
    if (r.status.state == RankState::Starting) r.status.state = RankState::Running;
    Q_EMIT rankChanged(rank);
    if (timing.valid()) Q_EMIT stepTimingReceived(rank, timing);
}

void LocalRun::sampleRanks(bool running)
{
    if (!m_systemSampler) return;
    QList<SampledRank> ranks;
    for (const auto& rank : m_ranks) {
        if (running && rank->process->isRunning() && rank->process->pid() > 0) ranks.append({rank->status.rank, rank->process->pid(), rank->status.gpu});
    }
    m_systemSampler->setRanks(ranks);
}

void LocalRun::onSystemSampled(const QList<SystemSample>& samples)
{
    if (isFinal(m_state)) return; // a tick that was on its way when the run ended
    m_systemFiles->append(samples);
    Q_EMIT systemSampled(samples);
}

void LocalRun::onWatchdog()
{
    for (auto& rank : m_ranks) {
        if (!rank->process->isRunning()) continue;
        const qint64 peak = proc::peakRssKiB(rank->process->pid());
        if (peak > rank->status.peakRssKiB) rank->status.peakRssKiB = peak;
        m_oom.track(rank->process->pid()); // follows a rank moved to another memory cgroup
    }
    if (!m_dirLost && (m_state == RunState::Starting || m_state == RunState::Running || m_state == RunState::Stopping)) {
        if (const QString lost = m_dir.lostReason(); !lost.isEmpty()) return failDirectoryLost(lost);
    }
    if (m_bringingDown || isFinal(m_state) || m_policy.hangTimeoutSec <= 0) return;
    const auto limitMs = static_cast<qint64>(m_policy.hangTimeoutSec * 1000);
    if (m_policy.groupWideProgress) {
        // Any rank's recent output is the group's progress, also that of a rank which has just exited
        // (rank 0 printed its last line and finished while a silent peer is still tearing down).
        for (const auto& rank : m_ranks) {
            if (rank->sinceHeartbeat.elapsed() <= limitMs) return;
        }
    }
    int culprit = -1;
    bool culpritStopped = false;
    qint64 worst = -1;
    QStringList silent;
    for (const auto& rank : m_ranks) {
        if (!rank->process->isRunning()) continue;
        const qint64 age = rank->sinceHeartbeat.elapsed();
        if (age <= limitMs) continue;
        silent << QString::number(rank->status.rank);
        // A stopped process (SIGSTOP, a debugger) is the cause; its peers are only waiting for it.
        // Otherwise the rank silent for longest is the likeliest.
        const bool stopped = proc::state(rank->process->pid()) == QLatin1Char('T');
        const qint64 score = stopped ? std::numeric_limits<qint64>::max() : age;
        if (score > worst) {
            worst = score;
            culprit = rank->status.rank;
            culpritStopped = stopped;
        }
    }
    if (culprit < 0) return;
    auto& rank = *m_ranks[static_cast<std::size_t>(culprit)];
    rank.status.state = RankState::Hung;
    const bool stacks = !StackDumps::debugger().isEmpty();
    considerFailure(culprit,
                    QStringLiteral("%1 for %2 s (hung%3; silent ranks: %4)%5")
                        .arg(m_policy.silenceWord).arg(m_policy.hangTimeoutSec)
                        .arg(culpritStopped ? QStringLiteral(", process is stopped") : QString())
                        .arg(silent.join(QStringLiteral(", ")))
                        .arg(stacks ? QStringLiteral("; its threads' stacks: %1").arg(m_dir.rankStacks(culprit)) : QString()),
                    FailurePriority::Hung, {});
    Q_EMIT rankChanged(culprit); // with the hang as the root cause (run_event.h words it)
    m_verdictWindow.stop();
    log(QStringLiteral("run failed: %1; taking every rank's stacks, then killing the group").arg(m_verdict.rootCause().summary()));
    dumpStacksThenKill();
}

void LocalRun::dumpStacksThenKill()
{
    // From here on a rank that ends is a consequence, as during a bring-down. The group is killed once the stacks
    // are taken, which StackDumps bounds whatever its tools do; a dump still running when every rank is gone
    // anyway is dropped (concludeIfAllExited), so it never outlives this attempt.
    m_bringingDown = true;
    const QString pythonSpy = m_job.isScript() ? StackDumps::pythonSpyFor(m_job.python) : QString();
    // PyTorch's NCCL trace, where the ranks have the launcher's pipe and file (the user named neither).
    const bool ncclTrace = m_job.device == QLatin1String("cuda") && !qEnvironmentVariableIsSet(kNcclTracePipeVariable) &&
                           !qEnvironmentVariableIsSet(kNcclTraceFileVariable);
    QList<StackDumps::Target> targets;
    for (const auto& rank : m_ranks) {
        if (rank->process->isRunning()) {
            targets.append({rank->status.rank, rank->process->pid(), m_dir.rankStacks(rank->status.rank), pythonSpy,
                            m_job.isScript() ? pythonStacksSignal() : 0, ncclTrace ? ncclTraceStemOf(runDir()) : QString()});
        }
    }
    m_stacks = std::make_unique<StackDumps>();
    connect(m_stacks.get(), &StackDumps::finished, this, [this](const QStringList& summary) {
        for (const QString& line : summary) log(line);
        m_stacks.release()->deleteLater(); // not deleted inside its own signal
        bringDown(SIGKILL, 0);
    });
    m_stacks->start(targets);
}

} // namespace ringmaster::supervisor
