#include "run_supervisor.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcessEnvironment>
#include <QSaveFile>
#include <QThread>

#include <csignal>
#include <limits>

#include <unistd.h>

#include "../protocol/wire.h"
#include "metric_server.h"
#include "preflight.h"
#include "rank_process.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kWatchdogIntervalMs = 250;
// After the first failure, other ranks' exits within this window are weighed for the root cause:
// a rank killed by a signal explains its peers' "connection reset" better than the other way round.
constexpr int kVerdictWindowMs = 300;
// Failure bring-down: SIGTERM, then SIGKILL after this long (peers blocked in a collective ignore SIGTERM).
constexpr int kFailureGraceMs = 2000;
constexpr int kTailLinesInReport = 8;
// ringmaster-trainer's exit code for bad input (core/trainer/errors.h; the supervisor never links the trainer).
constexpr int kTrainerUsageExitCode = 2;

enum FailurePriority { kPeerCollateral = 0, kExitOne = 1, kOtherExit = 2, kSignalled = 3, kHung = 4 };

QChar processState(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly)) return QLatin1Char('?');
    const QByteArray text = stat.readAll();
    const qsizetype close = text.lastIndexOf(')');
    return close >= 0 && close + 2 < text.size() ? QLatin1Char(text.at(close + 2)) : QLatin1Char('?');
}

QString timestamp()
{
    return QDateTime::currentDateTime().toString(Qt::ISODateWithMs);
}

} // namespace

struct RunSupervisor::Rank
{
    std::unique_ptr<RankProcess> process;
    RankStatus status;
    QElapsedTimer sinceHeartbeat;
};

RunSupervisor::RunSupervisor(QObject* parent)
    : QObject(parent)
{
    m_watchdog.setInterval(kWatchdogIntervalMs);
    connect(&m_watchdog, &QTimer::timeout, this, &RunSupervisor::onWatchdog);
    m_escalation.setSingleShot(true);
    connect(&m_escalation, &QTimer::timeout, this, [this] {
        log(QStringLiteral("grace period over: SIGKILL to the process group"));
        bringDown(SIGKILL, 0);
    });
    m_verdict.setSingleShot(true);
    connect(&m_verdict, &QTimer::timeout, this, [this] {
        log(QStringLiteral("run failed: %1; bringing the group down").arg(m_rootCause.summary()));
        bringDown(SIGTERM, kFailureGraceMs);
    });
}

RunSupervisor::~RunSupervisor()
{
    // No trainer outlives its supervisor: kill the group and reap every rank.
    signalGroup(m_group, SIGKILL);
    for (auto& rank : m_ranks) {
        if (rank->process && rank->process->isRunning() && rank->process->pid() > 0) {
            ::kill(static_cast<pid_t>(rank->process->pid()), SIGKILL);
            rank->process->waitForFinished(5000);
        }
    }
}

QString RunSupervisor::socketPath() const
{
    return m_server ? m_server->socketPath() : QString();
}

qint64 RunSupervisor::rejectedConnections() const
{
    return m_server ? m_server->rejectedConnections() : 0;
}

QList<RankStatus> RunSupervisor::ranks() const
{
    QList<RankStatus> list;
    for (const auto& rank : m_ranks) {
        RankStatus status = rank->status;
        status.msSinceHeartbeat = rank->sinceHeartbeat.isValid() ? rank->sinceHeartbeat.elapsed() : -1;
        list.append(status);
    }
    return list;
}

bool RunSupervisor::start(const JobSpec& job, QString* error)
{
    if (m_state != RunState::Idle && !isFinal(m_state)) {
        *error = QStringLiteral("a run is already active in %1").arg(m_runDir);
        return false;
    }
    return start(job, runPreflight(job), error);
}

bool RunSupervisor::start(const JobSpec& job, const PreflightResult& preflight, QString* error)
{
    if (m_state != RunState::Idle && !isFinal(m_state)) {
        *error = QStringLiteral("a run is already active in %1").arg(m_runDir);
        return false;
    }
    if (!preflight.ok()) {
        *error = preflight.error;
        return false;
    }
    m_job = job;
    m_trainerPath = preflight.trainerPath;
    m_masterPort = preflight.masterPort;
    m_server = std::make_unique<MetricServer>();
    if (!m_server->listen()) {
        *error = m_server->error();
        return false;
    }
    if (!prepareRunDirectory(error)) return false;
    connect(m_server.get(), &MetricServer::stepReceived, this, [this](const StepMetric& metric) {
        ++m_stepsReceived;
        if (m_state == RunState::Starting) setState(RunState::Running);
        Q_EMIT stepReceived(metric);
    });
    connect(m_server.get(), &MetricServer::evalReceived, this, &RunSupervisor::evalReceived);
    connect(m_server.get(), &MetricServer::checkpointReceived, this, &RunSupervisor::checkpointSaved);
    connect(m_server.get(), &MetricServer::heartbeatReceived, this, &RunSupervisor::onHeartbeat);
    connect(m_server.get(), &MetricServer::statusReceived, this, &RunSupervisor::onStatus);
    connect(m_server.get(), &MetricServer::notice, this, &RunSupervisor::log);

    // Nothing of a previous run in this supervisor may leak into this one's verdict.
    m_rootCause = {};
    m_rootCausePriority = -1;
    m_stopRequested = false;
    m_restarts = 0;
    m_stepsReceived = 0;
    m_totalSteps = 0;
    m_stepsPerEpoch = 0;
    log(QStringLiteral("run directory %1; socket %2; master port %3; trainer %4")
            .arg(m_runDir, m_server->socketPath()).arg(m_masterPort).arg(m_trainerPath));
    setState(RunState::Starting);
    launchGroup();
    m_watchdog.start();
    return true;
}

bool RunSupervisor::prepareRunDirectory(QString* error)
{
    if (!m_job.resume.isEmpty()) {
        m_runDir = runDirectoryOf(m_job.resume);
        if (m_runDir.isEmpty()) {
            *error = QStringLiteral("--resume %1: no such run directory or checkpoint").arg(m_job.resume);
            return false;
        }
    } else if (!m_job.runDir.isEmpty()) {
        m_runDir = QFileInfo(m_job.runDir).absoluteFilePath();
        if (QFileInfo::exists(m_runDir + QStringLiteral("/metrics.csv"))) {
            *error = QStringLiteral("--out %1 already holds a run: continue it with --resume %1, or choose another folder")
                         .arg(m_runDir);
            return false;
        }
    } else {
        const QString stem = QFileInfo(m_job.outputRoot).absoluteFilePath() + QLatin1Char('/') +
                             QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")) + QLatin1Char('-') +
                             m_job.trainerOption(QStringLiteral("model"), QStringLiteral("cnn"));
        m_runDir = stem;
        for (int n = 2; QFileInfo::exists(m_runDir); ++n) m_runDir = stem + QStringLiteral("-%1").arg(n);
    }
    if (!QDir().mkpath(m_runDir + QStringLiteral("/logs"))) {
        *error = QStringLiteral("cannot create the run directory %1: check permissions and free space").arg(m_runDir);
        return false;
    }
    JobSpec resolved = m_job;
    resolved.runDir = m_runDir;
    resolved.masterPort = m_masterPort;
    resolved.trainerPath = m_trainerPath;
    try {
        resolved.save(m_runDir + QStringLiteral("/job.json"));
    } catch (const JobError& e) {
        *error = e.message();
        return false;
    }
    m_launcherLog.close();
    m_launcherLog.setFileName(m_runDir + QStringLiteral("/logs/launcher.log"));
    m_launcherLog.open(QIODevice::WriteOnly | QIODevice::Append | QIODevice::Unbuffered);
    return true;
}

QString RunSupervisor::latestCheckpoint() const
{
    const auto files = QDir(m_runDir + QStringLiteral("/checkpoints"))
                           .entryList({QStringLiteral("step-*.pt")}, QDir::Files, QDir::Name);
    return files.isEmpty() ? QString() : m_runDir + QStringLiteral("/checkpoints/") + files.last();
}

void RunSupervisor::launchGroup()
{
    m_ranks.clear();
    m_finalStatus.clear();
    m_group = 0;
    m_bringingDown = false;
    m_escalation.stop();
    const int world = m_job.worldSize();
    const int cores = std::max(1, QThread::idealThreadCount());
    const bool cuda = m_job.device == QLatin1String("cuda");
    QList<int> gpus = m_job.gpus;
    if (cuda && gpus.isEmpty()) for (int i = 0; i < world; ++i) gpus.append(i);

    QStringList arguments{QStringLiteral("--job"), m_runDir + QStringLiteral("/job.json"), QStringLiteral("--out"),
                          m_runDir, QStringLiteral("--device"), m_job.device};
    const QString checkpoint = latestCheckpoint();
    if ((m_restarts > 0 || !m_job.resume.isEmpty()) && !checkpoint.isEmpty()) {
        arguments << QStringLiteral("--resume") << (m_job.resume.isEmpty() || m_restarts > 0 ? checkpoint : m_job.resume);
        log(QStringLiteral("resuming from %1").arg(arguments.last()));
    }
    auto base = QProcessEnvironment::systemEnvironment();
    base.insert(QStringLiteral("WORLD_SIZE"), QString::number(world));
    base.insert(QStringLiteral("LOCAL_WORLD_SIZE"), QString::number(world));
    base.insert(QStringLiteral("MASTER_ADDR"), QStringLiteral("127.0.0.1"));
    base.insert(QStringLiteral("MASTER_PORT"), QString::number(m_masterPort));
    base.insert(QStringLiteral("OMP_NUM_THREADS"), QString::number(std::max(1, cores / world)));
    base.insert(QString::fromLatin1(protocol::kSocketEnv), m_server->socketPath());
    base.insert(QString::fromLatin1(protocol::kTokenEnv), m_server->token());
    if (cuda) {
        QStringList visible;
        for (const int gpu : gpus) visible << QString::number(gpu);
        base.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), visible.join(QLatin1Char(',')));
    }

    for (int r = 0; r < world; ++r) {
        auto rank = std::make_unique<Rank>();
        rank->status.rank = r;
        rank->status.gpu = cuda ? gpus.value(r, -1) : -1;
        rank->status.state = RankState::Starting;
        rank->process = std::make_unique<RankProcess>(r, m_runDir + QStringLiteral("/logs/rank-%1.log").arg(r));
        RankProcess* process = rank->process.get();
        connect(process, &RankProcess::lineLogged, this, &RunSupervisor::logLine);
        connect(process, &RankProcess::finished, this, &RunSupervisor::onRankFinished);
        connect(process, &RankProcess::failedToStart, this, [this](int failed, const QString& why) {
            recordFailure(failed, QStringLiteral("could not be started: %1").arg(why), kOtherExit);
            onRankFinished(failed, -1, 0);
        });
        auto environment = base;
        environment.insert(QStringLiteral("RANK"), QString::number(r));
        environment.insert(QStringLiteral("LOCAL_RANK"), QString::number(r));
        process->start(m_trainerPath, arguments, environment, m_group);
        rank->status.pid = process->pid();
        // Rank 0 founded the group with setsid() before exec; start() returned after exec, so the
        // group exists when the next rank joins it.
        if (r == 0) m_group = static_cast<pid_t>(process->pid());
        rank->sinceHeartbeat.start();
        m_ranks.push_back(std::move(rank));
        Q_EMIT rankChanged(r);
    }
    log(QStringLiteral("started %1 rank(s) in process group %2: %3 %4")
            .arg(world).arg(m_group).arg(m_trainerPath, arguments.join(QLatin1Char(' '))));
}

void RunSupervisor::onHeartbeat(int rank, qint64 step, const QString& phase)
{
    if (rank < 0 || rank >= static_cast<int>(m_ranks.size())) {
        log(QStringLiteral("ignored a heartbeat from rank %1, outside the world of %2").arg(rank).arg(m_ranks.size()));
        return;
    }
    auto& r = *m_ranks[static_cast<std::size_t>(rank)];
    r.sinceHeartbeat.restart();
    r.status.step = step;
    r.status.phase = phase;
    if (r.status.state == RankState::Starting) r.status.state = RankState::Running;
    Q_EMIT rankChanged(rank);
}

void RunSupervisor::onStatus(const QString& status, const QJsonObject& frame)
{
    if (status == QLatin1String("running")) {
        m_totalSteps = static_cast<qint64>(frame.value(QStringLiteral("total_steps")).toDouble(m_totalSteps));
        m_stepsPerEpoch = static_cast<qint64>(frame.value(QStringLiteral("steps_per_epoch")).toDouble(m_stepsPerEpoch));
        Q_EMIT trainingStarted(static_cast<qint64>(frame.value(QStringLiteral("resumed_from_step")).toDouble(0)));
        if (m_state == RunState::Starting) setState(RunState::Running);
    } else {
        m_finalStatus = status;
    }
}

void RunSupervisor::onWatchdog()
{
    if (m_bringingDown || isFinal(m_state)) return;
    const qint64 limitMs = static_cast<qint64>(m_job.heartbeatTimeoutSec * 1000);
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
        const bool stopped = processState(rank->process->pid()) == QLatin1Char('T');
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
    Q_EMIT rankChanged(culprit);
    recordFailure(culprit,
                  QStringLiteral("stopped heartbeating for %1 s (hung%2; silent ranks: %3)")
                      .arg(m_job.heartbeatTimeoutSec)
                      .arg(culpritStopped ? QStringLiteral(", process is stopped") : QString())
                      .arg(silent.join(QStringLiteral(", "))),
                  kHung);
    m_verdict.stop();
    log(QStringLiteral("run failed: %1; killing the group").arg(m_rootCause.summary()));
    bringDown(SIGKILL, 0);
}

void RunSupervisor::recordFailure(int rank, const QString& reason, int priority, int exitCode, int exitSignal)
{
    if (m_bringingDown && priority != kHung) return; // consequences of our own bring-down
    if (priority <= m_rootCausePriority) return;
    m_rootCausePriority = priority;
    m_rootCause.rank = rank;
    m_rootCause.reason = reason;
    m_rootCause.exitCode = exitCode;
    m_rootCause.exitSignal = exitSignal;
    m_rootCause.lastLines = rank >= 0 && rank < static_cast<int>(m_ranks.size())
                                ? m_ranks[static_cast<std::size_t>(rank)]->process->lastLines(kTailLinesInReport)
                                : QStringList();
    if (!m_verdict.isActive() && priority != kHung && !m_bringingDown) m_verdict.start(kVerdictWindowMs);
}

void RunSupervisor::onRankFinished(int rank, int exitCode, int exitSignal)
{
    if (rank < 0 || rank >= static_cast<int>(m_ranks.size())) return;
    auto& r = *m_ranks[static_cast<std::size_t>(rank)];
    const bool clean = exitCode == 0 && exitSignal == 0;
    r.status.exitCode = exitCode;
    r.status.exitSignal = exitSignal;
    if (r.status.state != RankState::Hung) r.status.state = clean ? RankState::Exited : RankState::Failed;
    Q_EMIT rankChanged(rank);
    QString how = exitSignal ? QStringLiteral("killed by signal %1 (%2)").arg(exitSignal).arg(signalName(exitSignal))
                             : QStringLiteral("exited with code %1").arg(exitCode);
    if (exitCode == kTrainerUsageExitCode) how += QStringLiteral(" (bad input)");
    log(QStringLiteral("rank %1 (pid %2) %3").arg(rank).arg(r.status.pid).arg(how));
    if (!clean && !(m_stopRequested && m_bringingDown)) {
        const QString tail = r.process->lastLines(3).join(QLatin1Char('\n'));
        int priority = exitSignal ? kSignalled : (exitCode == 1 ? kExitOne : kOtherExit);
        if (exitCode == 1 && tail.contains(QStringLiteral("a peer rank died"))) priority = kPeerCollateral;
        recordFailure(rank, how, priority, exitCode, exitSignal);
    }
    concludeIfAllExited();
}

void RunSupervisor::signalRanks(int signal)
{
    // Once per rank: through the group, and directly only to a rank that is not in it. A trainer
    // takes a second SIGTERM as "die now", so a double delivery would skip its final checkpoint.
    signalGroup(m_group, signal);
    for (auto& rank : m_ranks) {
        const auto pid = static_cast<pid_t>(rank->process->pid());
        if (rank->process->isRunning() && pid > 0 && (m_group <= 0 || ::getpgid(pid) != m_group)) ::kill(pid, signal);
    }
}

void RunSupervisor::bringDown(int signal, int escalateAfterMs)
{
    m_bringingDown = true;
    signalRanks(signal);
    if (signal != SIGKILL && escalateAfterMs >= 0) m_escalation.start(escalateAfterMs);
}

void RunSupervisor::requestStop()
{
    if (m_state != RunState::Starting && m_state != RunState::Running) return;
    m_stopRequested = true;
    setState(RunState::Stopping);
    log(QStringLiteral("stop requested: SIGTERM to every rank, SIGKILL after %1 s").arg(m_job.gracePeriodSec));
    signalRanks(SIGTERM);
    m_escalation.start(static_cast<int>(m_job.gracePeriodSec * 1000));
}

void RunSupervisor::kill()
{
    if (isFinal(m_state) || m_state == RunState::Idle) return;
    m_stopRequested = true;
    setState(RunState::Stopping);
    log(QStringLiteral("kill requested: SIGKILL to the process group"));
    bringDown(SIGKILL, 0);
}

void RunSupervisor::requestCheckpoint()
{
    if (m_ranks.empty() || !m_ranks.front()->process->isRunning()) return;
    log(QStringLiteral("checkpoint requested: SIGUSR1 to rank 0"));
    ::kill(static_cast<pid_t>(m_ranks.front()->process->pid()), SIGUSR1);
}

void RunSupervisor::concludeIfAllExited()
{
    for (const auto& rank : m_ranks) {
        if (rank->process->isRunning() && rank->status.state != RankState::Failed && rank->status.state != RankState::Exited) {
            return;
        }
    }
    m_escalation.stop();
    m_verdict.stop();
    const bool failed = m_rootCause.rank >= 0 || !m_rootCause.reason.isEmpty();
    if (failed && !m_stopRequested) {
        const bool badInput = m_rootCause.exitCode == kTrainerUsageExitCode; // a restart would fail the same way
        if (m_restarts < m_job.maxRestarts && !badInput) {
            ++m_restarts;
            log(QStringLiteral("restart %1 of %2 after: %3").arg(m_restarts).arg(m_job.maxRestarts).arg(m_rootCause.summary()));
            m_rootCause = {};
            m_rootCausePriority = -1;
            if (m_job.masterPort == 0) m_masterPort = pickFreePort();
            setState(RunState::Starting);
            // Not from inside the finished signal of a process we are about to destroy.
            QTimer::singleShot(0, this, &RunSupervisor::launchGroup);
            return;
        }
        finishRun(RunState::Failed);
        return;
    }
    // Rank 0 reports the end over the socket; if its last frames were lost, summary.json is the durable
    // record (not after a stop, when the file may still be an earlier segment's).
    QString status = m_finalStatus;
    if (status.isEmpty() && !m_stopRequested) status = summaryStatus();
    if (status == QLatin1String("completed")) return finishRun(RunState::Completed);
    if (status == QLatin1String("stopped") || m_stopRequested) return finishRun(RunState::Stopped);
    m_rootCause.rank = 0;
    m_rootCause.reason = QStringLiteral("exited without reporting completion (summary.json status '%1')").arg(status);
    finishRun(RunState::Failed);
}

QString RunSupervisor::summaryStatus() const
{
    QFile file(m_runDir + QStringLiteral("/summary.json"));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object().value(QStringLiteral("status")).toString();
}

void RunSupervisor::finishRun(RunState state)
{
    m_watchdog.stop();
    patchSummary(state);
    if (state == RunState::Failed) {
        log(QStringLiteral("FAILED: %1").arg(m_rootCause.summary()));
        for (const auto& line : m_rootCause.lastLines) log(QStringLiteral("  | %1").arg(line));
    } else {
        log(QStringLiteral("run %1 after %2 restart(s); %3 step metrics received over the socket")
                .arg(runStateName(state)).arg(m_restarts).arg(m_stepsReceived));
    }
    setState(state);
    Q_EMIT finished(state);
}

void RunSupervisor::patchSummary(RunState state)
{
    const QString path = m_runDir + QStringLiteral("/summary.json");
    QJsonObject summary;
    QFile in(path);
    if (in.open(QIODevice::ReadOnly)) summary = QJsonDocument::fromJson(in.readAll()).object();
    in.close();
    if (state == RunState::Failed || !summary.contains(QStringLiteral("status"))) {
        summary.insert(QStringLiteral("status"), runStateName(state));
    }
    summary.insert(QStringLiteral("restarts"), m_restarts);
    summary.insert(QStringLiteral("world_size"), m_job.worldSize());
    summary.insert(QStringLiteral("metrics_received_over_socket"), m_stepsReceived);
    if (state == RunState::Failed) {
        summary.insert(QStringLiteral("root_cause"), m_rootCause.summary());
        summary.insert(QStringLiteral("root_cause_rank"), m_rootCause.rank);
        summary.insert(QStringLiteral("root_cause_last_lines"), QJsonArray::fromStringList(m_rootCause.lastLines));
    }
    QSaveFile out(path);
    if (out.open(QIODevice::WriteOnly)) {
        out.write(QJsonDocument(summary).toJson(QJsonDocument::Indented));
        out.commit();
    }
}

void RunSupervisor::setState(RunState state)
{
    if (m_state == state) return;
    m_state = state;
    log(QStringLiteral("state: %1").arg(runStateName(state)));
    Q_EMIT stateChanged(state);
}

void RunSupervisor::log(const QString& message)
{
    if (m_launcherLog.isOpen()) m_launcherLog.write((timestamp() + QLatin1Char(' ') + message + QLatin1Char('\n')).toUtf8());
    Q_EMIT logLine(-1, message);
}

} // namespace ringmaster::supervisor
