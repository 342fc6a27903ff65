#include "supervisor/slurm/slurm_run.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonObject>
#include <QSaveFile>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

#include "protocol/run_layout.h"
#include "protocol/wire.h"
#include "supervisor/metric_server.h"
#include "supervisor/rank_command.h"
#include "supervisor/stack_dumps.h"
#include "supervisor/system_files.h"
#include "supervisor/tensorboard_follower.h"
#include "supervisor/slurm/slurm_launch_record.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kKeptLines = 200;          // per rank, for the failure report
constexpr int kKeptBatchLines = 2000;    // the batch script's output, for srun's task errors

void keepLast(QStringList* lines, const QStringList& added, int bound)
{
    lines->append(added);
    if (lines->size() > bound) lines->remove(0, lines->size() - bound);
}

// The step of the last row of RUN_DIR/scalars.csv (what an earlier supervisor of this run recorded), or -1.
qint64 lastRecordedStep(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return -1;
    constexpr qint64 kTail = 4096;
    file.seek(std::max<qint64>(0, file.size() - kTail));
    const QList<QByteArray> lines = file.readAll().split('\n');
    for (auto it = lines.crbegin(); it != lines.crend(); ++it) {
        bool ok = false;
        const qint64 step = it->left(it->indexOf(',')).toLongLong(&ok);
        if (ok) return step;
    }
    return -1;
}

} // namespace

SlurmRun::SlurmRun(QObject* parent)
    : RunBackendBase(parent)
{
    m_pollTimer.setInterval(kPollIntervalMs);
    connect(&m_pollTimer, &QTimer::timeout, this, &SlurmRun::poll);
    m_followTimer.setInterval(kFollowIntervalMs);
    connect(&m_followTimer, &QTimer::timeout, this, &SlurmRun::follow);
    connect(&m_escalation, &QTimer::timeout, this, [this] {
        log(QStringLiteral("grace period over: cancelling Slurm job %1").arg(m_jobId));
        m_cancelSent = true;
        runAsync(QStringLiteral("scancel"), [id = m_jobId](const SlurmClient& client) { return client.kill(id); });
    });
    connect(&m_resolving, &QFutureWatcher<ReachableAddress>::finished, this, &SlurmRun::onAddressResolved);
    connect(&m_submitting, &QFutureWatcher<SlurmSubmission>::finished, this, &SlurmRun::onSubmitted);
    connect(&m_polling, &QFutureWatcher<SlurmJobStatus>::finished, this, &SlurmRun::onPolled);
}

SlurmRun::~SlurmRun()
{
    // The job belongs to Slurm: it goes on without this process, and can be followed again.
    if (!m_left && m_state != RunState::Idle && !isFinal(m_state) && !m_jobId.isEmpty()) {
        m_dir.log(QStringLiteral("this supervisor exits; Slurm job %1 keeps running: follow it again with %2")
                      .arg(m_jobId, attachCommandLine(runDir())));
    }
}

bool SlurmRun::start(const JobSpec& job, const PreflightResult& checked, QString* error)
{
    if (m_state != RunState::Idle) {
        *error = QStringLiteral("a Slurm run backend runs one job");
        return false;
    }
    adoptJob(job, checked);
    m_job.slurm.jobId.clear();
    if (const QString problem = slurmJobProblem(m_job, m_job.slurm); !problem.isEmpty()) {
        *error = problem;
        return false;
    }
    m_server = std::make_unique<MetricServer>();
    m_server->setPeerCheck([this](int rank, qint64 pid) {
        if (rank < 0 || rank >= m_ranks.size()) return false;
        m_ranks[rank].pid = pid;   // a task on this host (a Unix socket reaches no other)
        if (rank == 0) m_rank0Pid = pid;
        return true;
    });
    if (!m_server->listen()) {
        *error = m_server->error();
        return false;
    }
    watchWrites();
    if (!m_dir.prepare(m_job, 0, checked.trainerPath, error, /*holdRunLock=*/false)) return false;
    const int world = m_job.slurm.nodes * slurmTasksPerNode(m_job, m_job.slurm);
    for (int r = 0; r < world; ++r) {
        RankStatus status;
        status.rank = r;
        status.state = RankState::Pending;
        m_ranks.append(status);
    }
    begin();
    connect(m_server.get(), &MetricServer::stepReceived, this, [this](const StepMetric& metric) { onStep(metric, true); });
    connect(m_server.get(), &MetricServer::evalReceived, this, [this](const EvalMetric& metric) { onEval(metric, true); });
    connect(m_server.get(), &MetricServer::scalarsReceived, this, [this](const ScalarBatch& scalars) { recordScalars(scalars); });
    connect(m_server.get(), &MetricServer::checkpointReceived, this, &RunBackend::checkpointSaved);
    connect(m_server.get(), &MetricServer::statusReceived, this, [this](const QString& status, const QJsonObject& frame) {
        m_sinceSocketFrame.restart();
        if (status == QLatin1String(protocol::kStatusRunning)) tasksReportOverTheSocket();
        onStatus(status, frame);
    });
    connect(m_server.get(), &MetricServer::notice, this, &SlurmRun::log);
    connect(m_server.get(), &MetricServer::peerAccepted, this, [this](int rank, const QString& transport) {
        if (rank != 0) return;
        m_liveTransport = transport;
        log(QStringLiteral("metrics: live from rank 0 over %1").arg(transport));
    });
    m_whereabouts.resize(static_cast<std::size_t>(world));
    // What each rank's process uses, as it says itself (its node's /proc is not here): system.csv and tb/system.
    m_systemFiles = std::make_unique<SystemFiles>(m_dir);
    connect(m_server.get(), &MetricServer::usageReceived, this, [this](const QList<SystemSample>& samples) {
        if (isFinal(m_state)) return;
        m_systemFiles->append(samples);
        Q_EMIT systemSampled(samples);
    });
    connect(m_server.get(), &MetricServer::rankLocated, this, [this](int rank, qint64 pid, const QString& node) {
        if (rank < 0 || static_cast<std::size_t>(rank) >= m_whereabouts.size()) return;
        m_whereabouts[static_cast<std::size_t>(rank)] = RankWhereabouts{pid, node};
    });
    connect(m_server.get(), &MetricServer::heartbeatReceived, this,
            [this](int rank, qint64 step, const QString& phase, const StepTiming& timing) {
        m_sinceSocketFrame.restart();
        if (rank < 0 || rank >= m_ranks.size()) return;
        RankStatus& status = m_ranks[rank];
        if (m_sinceBeat.size() < static_cast<std::size_t>(m_ranks.size())) m_sinceBeat.resize(static_cast<std::size_t>(m_ranks.size()));
        m_sinceBeat[static_cast<std::size_t>(rank)].restart();
        if (step >= 0) status.step = step;
        if (!phase.isEmpty()) status.phase = phase;
        if (timing.valid()) status.timing = timing;
        status.msSinceHeartbeat = 0;
        if (status.state == RankState::Pending || status.state == RankState::Starting) status.state = RankState::Running;
        Q_EMIT rankChanged(rank);
        if (timing.valid()) Q_EMIT stepTimingReceived(rank, timing);
    });
    followTensorBoard();

    BatchScriptInput input;
    input.job = m_job;
    input.request = m_job.slurm;
    input.runDir = runDir();
    input.jobFile = m_dir.jobFile();
    input.trainerPath = checked.trainerPath;
    input.interpreterPath = checked.interpreterPath;
    input.scriptPath = checked.scriptPath;
    input.helperDir = m_job.isScript() ? helperModuleDir() : QString();
    input.resumeFrom = trainerResumeTarget(m_job, 0, runDir(), m_dir.latestCheckpoint());
    m_batchInput = input;
    m_batchScript = writeBatchScript(input, error);
    if (m_batchScript.isEmpty()) return false;
    log(QStringLiteral("run directory %1; Slurm batch script %2 (%3 task(s)); socket %4; %5")
            .arg(runDir(), m_batchScript).arg(world).arg(m_server->socketPath())
            .arg(m_job.isScript() ? QStringLiteral("script %1; interpreter %2").arg(checked.scriptPath, checked.interpreterPath)
                                  : QStringLiteral("trainer ") + checked.trainerPath));
    if (!input.resumeFrom.isEmpty()) log(QStringLiteral("resuming from %1").arg(input.resumeFrom));
    setState(RunState::Starting);
    if (m_job.slurm.metrics == QLatin1String("files")) {
        m_followCsv = !m_job.isScript();
        log(QStringLiteral("metrics: from %1 in the run directory (\"launch.slurm.metrics\" is \"files\")")
                .arg(m_job.isScript() ? QStringLiteral("rank 0's log") : QStringLiteral("metrics.csv and eval.csv")));
        submit();
    } else {
        // The TCP endpoint's address needs scontrol and name lookups: off this thread.
        m_resolving.setFuture(QtConcurrent::run([client = m_client] { return addressComputeNodesReach(client); }));
    }
    return true;
}

void SlurmRun::onAddressResolved()
{
    const ReachableAddress reachable = m_resolving.result();
    if (!reachable.error.isEmpty()) {
        log(QStringLiteral("metrics: no TCP endpoint: %1").arg(reachable.error));
    } else if (!m_server->listenTcp(reachable.address)) {
        log(QStringLiteral("metrics: no TCP endpoint: %1").arg(m_server->error()));
    } else {
        log(QStringLiteral("metrics: TCP endpoint %1 (%2)%3")
                .arg(m_server->tcpEndpoint(), reachable.how,
                     m_job.slurm.metrics == QLatin1String("tcp") ? QStringLiteral("; the socket is not offered (\"launch.slurm.metrics\" is \"tcp\")")
                                                                 : QString()));
    }
    submit();
}

void SlurmRun::submit()
{
    if (m_stopRequested) {
        return endUnsubmitted(RunState::Stopped, QStringLiteral("stopped before the job was submitted: nothing was sent to Slurm"));
    }
    QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
    const SubmitterOffer offer = submitterOffer();
    if (!offer.socketPath.isEmpty()) environment.insert(QLatin1String(kSubmitterSocketEnv), offer.socketPath);
    if (!offer.endpoint.isEmpty()) environment.insert(QLatin1String(kSubmitterEndpointEnv), offer.endpoint);
    if (offer.token) environment.insert(QLatin1String(kSubmitterTokenEnv), m_server->token());
    m_submitting.setFuture(QtConcurrent::run([client = m_client, script = m_batchScript, environment] { return client.submit(script, environment); }));
}

// What the tasks get from this supervisor through sbatch's environment ("launch.slurm.metrics" decides).
SubmitterOffer SlurmRun::submitterOffer() const
{
    SubmitterOffer offer;
    const QString mode = m_job.slurm.metrics;
    if (mode == QLatin1String("auto")) offer.socketPath = m_server->socketPath();
    if (mode != QLatin1String("files")) {
        offer.endpoint = m_server->tcpEndpoint();
        offer.token = true;
    }
    return offer;
}

// What start() and attach() share: the scalar record, the output parser and the file followers.
void SlurmRun::begin()
{
    openScalarRecord();
    m_rankLogs.clear();
    m_lastLines.assign(static_cast<std::size_t>(m_ranks.size()), {});
    for (int r = 0; r < m_ranks.size(); ++r) m_rankLogs.emplace_back(m_dir.rankLog(r));
    m_csv = MetricsCsvFollower(runDir());
}

void SlurmRun::onSubmitted()
{
    const SlurmSubmission submission = m_submitting.result();
    if (submission.jobId.isEmpty()) {
        RootCause cause;
        cause.reason = QStringLiteral("Slurm refused the job: %1").arg(submission.error);
        m_verdict.setRootCause(cause);
        m_followTimer.stop();
        return endUnsubmitted(RunState::Failed, QString());
    }
    m_jobId = submission.jobId;
    QSaveFile idFile(QDir(runDir()).filePath(QLatin1String(protocol::kSlurmJobIdFile)));
    if (idFile.open(QIODevice::WriteOnly)) {
        idFile.write(m_jobId.toUtf8() + '\n');
        idFile.commit();
    }
    try {
        JobSpec recorded = JobSpec::load(m_dir.jobFile());
        recorded.slurm.jobId = m_jobId;
        recorded.save(m_dir.jobFile());
    } catch (const JobError& e) {
        log(QStringLiteral("could not record the Slurm job id in job.json: %1").arg(e.message()));
    }
    m_dir.writeCommands(slurmLaunchRecord(m_batchInput, m_jobId, submitterOffer()));
    m_batchLog = FileTail(m_dir.file(protocol::slurmBatchLogFile(m_jobId.toStdString())));
    log(QStringLiteral("submitted as Slurm job %1%2").arg(m_jobId, submission.cluster.isEmpty() ? QString() : QStringLiteral(" on cluster ") + submission.cluster));
    m_pollTimer.start();
    m_followTimer.start();
    // A stop asked for while sbatch ran: the job is cancelled as soon as it has an id.
    if (m_stopRequested) {
        m_cancelSent = true;
        runAsync(QStringLiteral("scancel"), [id = m_jobId](const SlurmClient& client) { return client.kill(id); });
    }
    poll();
}

bool SlurmRun::attach(const QString& runDir, QString* error)
{
    watchWrites();
    if (!m_dir.adopt(runDir, error)) return false;
    try {
        m_job = JobSpec::load(m_dir.jobFile());
    } catch (const JobError& e) {
        *error = e.message();
        return false;
    }
    m_jobId = m_job.slurm.jobId;
    if (m_jobId.isEmpty()) {
        QFile idFile(QDir(m_dir.path()).filePath(QLatin1String(protocol::kSlurmJobIdFile)));
        if (idFile.open(QIODevice::ReadOnly)) m_jobId = QString::fromUtf8(idFile.readAll()).trimmed();
    }
    if (!m_job.slurm.enabled || m_jobId.isEmpty()) {
        *error = QStringLiteral("%1 was not submitted to Slurm (its job.json has no \"launch.slurm.job_id\"): there is nothing to attach to")
                     .arg(runDir);
        return false;
    }
    const SlurmJobStatus status = m_client.state(m_jobId);
    if (status.state == SlurmJobState::Unknown) {
        *error = QStringLiteral("cannot ask Slurm about job %1: %2").arg(m_jobId, status.error);
        return false;
    }
    if (status.isFinal()) {
        *error = QStringLiteral("Slurm job %1 has ended (%2): its results are in %3")
                     .arg(m_jobId, status.stateText.isEmpty() ? QStringLiteral("no longer known") : status.stateText, m_dir.path());
        return false;
    }
    m_attached = true;
    const int world = m_job.slurm.nodes * slurmTasksPerNode(m_job, m_job.slurm);
    for (int r = 0; r < world; ++r) {
        RankStatus rank;
        rank.rank = r;
        rank.state = status.state == SlurmJobState::Running ? RankState::Running : RankState::Pending;
        m_ranks.append(rank);
    }
    begin();
    // What the logs hold already is kept for a failure report, not shown again; the CSVs are read from
    // their start (the chart shows the whole run) but only new steps are recorded in scalars.csv.
    for (int r = 0; r < world; ++r) keepLast(&m_lastLines[static_cast<std::size_t>(r)], m_rankLogs[static_cast<std::size_t>(r)].poll(), kKeptLines);
    m_batchLog = FileTail(m_dir.file(protocol::slurmBatchLogFile(m_jobId.toStdString())));
    keepLast(&m_batchLines, m_batchLog.poll(), kKeptBatchLines);
    m_followCsv = !m_job.isScript();
    m_lastScalarStep = lastRecordedStep(QDir(runDir).filePath(QLatin1String(protocol::kScalarsFile)));
    log(QStringLiteral("attached to Slurm job %1 (%2); metrics from %3; logs from %4/logs")
            .arg(m_jobId, status.stateText,
                 m_job.isScript() ? QStringLiteral("rank 0's output") : QStringLiteral("metrics.csv and eval.csv"), m_dir.path()));
    m_sawRunning = status.state == SlurmJobState::Running;
    setState(m_sawRunning ? RunState::Running : RunState::Starting);
    m_pollTimer.start();
    m_followTimer.start();
    follow();
    return true;
}

void SlurmRun::poll()
{
    if (m_jobId.isEmpty() || m_polling.isRunning()) return;
    m_polling.setFuture(QtConcurrent::run([client = m_client, id = m_jobId] { return client.state(id); }));
}

void SlurmRun::onPolled()
{
    if (isFinal(m_state) || m_left) return;
    const SlurmJobStatus status = m_polling.result();
    if (status.state == SlurmJobState::Unknown) {
        const QString text = QStringLiteral("cannot ask Slurm about job %1: %2").arg(m_jobId, status.error);
        if (text != m_queueText) log(text);
        m_queueText = text;
        return;
    }
    QString text = status.stateText;
    if (!status.reason.isEmpty() && status.reason != QLatin1String("None")) text += QStringLiteral(" (%1)").arg(status.reason);
    if (text != m_queueText) {
        m_queueText = text;
        log(QStringLiteral("Slurm job %1: %2").arg(m_jobId, text));
    }
    if (status.state == SlurmJobState::Running) sawTasksRunning();
    // Not running now (requeued, pending again, completing): its tasks are gone, so their silence is no hang; the
    // next start's heartbeats start the clocks again.
    else for (QElapsedTimer& beat : m_sinceBeat) beat.invalidate();
    if (status.isFinal()) conclude(status);
}

void SlurmRun::sawTasksRunning()
{
    if (m_sawRunning) return;
    m_sawRunning = true;
    m_sinceSocketFrame.start();
    setRankStates(RankState::Starting);
    if (m_state == RunState::Starting) setState(RunState::Running);
}

void SlurmRun::tasksReportOverTheSocket()
{
    if (m_sawRunning || m_left || isFinal(m_state)) return;
    // Rank 0 reports before Slurm's next answer says RUNNING (polls are seconds apart): the job's step runs, so
    // a stop now signals its tasks (graceful, final checkpoint) rather than cancelling a job thought queued.
    if (!m_queueText.startsWith(QLatin1String("RUNNING"))) {
        m_queueText = QStringLiteral("RUNNING");
        log(QStringLiteral("Slurm job %1: RUNNING (rank 0 reports; Slurm's last answer was older)").arg(m_jobId));
    }
    sawTasksRunning();
}

void SlurmRun::follow()
{
    for (std::size_t r = 0; r < m_rankLogs.size(); ++r) {
        const QStringList lines = m_rankLogs[r].poll();
        if (lines.isEmpty()) continue;
        keepLast(&m_lastLines[r], lines, kKeptLines);
        for (const QString& line : lines) {
            Q_EMIT logLine(static_cast<int>(r), line);
            ScalarBatch scalars;
            if (r == 0 && m_lineParser.enabled() && m_lineParser.parseLine(line, &scalars)) recordScalars(scalars);
        }
    }
    const QStringList batch = m_batchLog.path().isEmpty() ? QStringList() : m_batchLog.poll();
    keepLast(&m_batchLines, batch, kKeptBatchLines);
    for (const QString& line : batch) log(QStringLiteral("slurm: %1").arg(line));
    if (!m_followCsv && !m_job.isScript() && m_sawRunning && m_sinceSocketFrame.isValid() &&
        m_sinceSocketFrame.elapsed() > kSocketSilenceMs) {
        m_followCsv = true;
        log(m_liveTransport.isEmpty()
                ? QStringLiteral("metrics: nothing from rank 0 over this host's socket or TCP for %1 s (a node that cannot reach "
                                 "this host?): following %2/metrics.csv").arg(kSocketSilenceMs / 1000).arg(runDir())
                : QStringLiteral("metrics: rank 0's connection (%1) has been silent for %2 s: following %3/metrics.csv as well")
                      .arg(m_liveTransport).arg(kSocketSilenceMs / 1000).arg(runDir()));
    }
    if (m_followCsv) followCsv();
    watchForHang();
}

void SlurmRun::followCsv()
{
    for (const StepMetric& metric : m_csv.pollSteps()) onStep(metric, false);
    for (const EvalMetric& metric : m_csv.pollEvals()) onEval(metric, false);
}

void SlurmRun::onStep(const StepMetric& metric, bool overSocket)
{
    if (overSocket) {
        m_sinceSocketFrame.restart();
        tasksReportOverTheSocket();
    }
    if (metric.step <= m_lastStep) return; // already shown (by the other path)
    m_lastStep = metric.step;
    ++m_stepsReceived;
    if (!m_ranks.isEmpty() && !overSocket) {
        m_ranks[0].step = metric.step;
        Q_EMIT rankChanged(0);
    }
    if (metric.step > m_lastScalarStep || overSocket) recordScalars(scalarsOf(metric));
    Q_EMIT stepReceived(metric);
}

void SlurmRun::onEval(const EvalMetric& metric, bool overSocket)
{
    if (overSocket) m_sinceSocketFrame.restart();
    if (metric.step <= m_lastEvalStep) return;
    m_lastEvalStep = metric.step;
    if (metric.step > m_lastScalarStep || overSocket) recordScalars(scalarsOf(metric));
    Q_EMIT evalReceived(metric);
}

void SlurmRun::trainingResumesFrom(qint64 step)
{
    m_lastStep = std::min(m_lastStep, step);
    m_lastEvalStep = std::min(m_lastEvalStep, step);
}

void SlurmRun::endUnsubmitted(RunState state, const QString& endedLine)
{
    RunDirectory::Outcome outcome;
    outcome.state = state;
    outcome.worldSize = static_cast<int>(m_ranks.size());
    outcome.supervisorOwnsSummary = true;
    concludeRun(outcome, endedLine);
}

void SlurmRun::runAsync(const QString& what, std::function<QString(const SlurmClient&)> call)
{
    auto* watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, what] {
        if (const QString error = watcher->result(); !error.isEmpty()) log(QStringLiteral("%1: %2").arg(what, error));
        watcher->deleteLater();
    });
    watcher->setFuture(QtConcurrent::run([client = m_client, call] { return call(client); }));
}

void SlurmRun::setRankStates(RankState state)
{
    for (RankStatus& rank : m_ranks) {
        if (rank.state == RankState::Pending) rank.state = state;
        Q_EMIT rankChanged(rank.rank);
    }
}

} // namespace ringmaster::supervisor
