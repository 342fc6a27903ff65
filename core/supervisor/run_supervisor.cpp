#include "supervisor/run_supervisor.h"

#include "supervisor/local/local_run.h"
#include "supervisor/slurm/slurm_run.h"
#include "supervisor/trusted_programs.h"

namespace ringmaster::supervisor {

RunSupervisor::RunSupervisor(QObject* parent)
    : QObject(parent)
{
    m_clock.start();
}

// Destroying the backend (LocalRun kills every rank it still owns; SlurmRun leaves the Slurm job running
// and says how to attach to it) happens with this object, while its signals can still be forwarded.
RunSupervisor::~RunSupervisor()
{
    delete m_backend.data();
}

bool RunSupervisor::isActive() const
{
    return m_backend && m_backend->state() != RunState::Idle && !isFinal(m_backend->state());
}

void RunSupervisor::adopt(RunBackend* backend)
{
    // The previous run's backend may be the sender of the signal whose handler starts this run.
    if (m_backend) {
        m_backend->disconnect(this);
        m_backend->deleteLater();
    }
    m_backend = backend;
    connect(backend, &RunBackend::scalarsReceived, this, &RunSupervisor::scalarsReceived);
    connect(backend, &RunBackend::stateChanged, this, &RunSupervisor::stateChanged);
    connect(backend, &RunBackend::stepReceived, this, &RunSupervisor::stepReceived);
    connect(backend, &RunBackend::evalReceived, this, &RunSupervisor::evalReceived);
    connect(backend, &RunBackend::checkpointSaved, this, &RunSupervisor::checkpointSaved);
    connect(backend, &RunBackend::trainingStarted, this, &RunSupervisor::trainingStarted);
    connect(backend, &RunBackend::rankChanged, this, &RunSupervisor::rankChanged);
    connect(backend, &RunBackend::logLine, this, &RunSupervisor::logLine);
    connect(backend, &RunBackend::problem, this, &RunSupervisor::problem);
    connect(backend, &RunBackend::finished, this, &RunSupervisor::finished);
    connect(backend, &RunBackend::stepTimingReceived, this, &RunSupervisor::onStepTiming);
    connect(backend, &RunBackend::systemSampled, this, [this](const QList<SystemSample>& samples) {
        for (const SystemSample& sample : samples) m_systemNow[sample.rank].insert(sample.name, sample.value);
        Q_EMIT systemSampled(samples);
    });
    // A new run, or a restart from a checkpoint: new processes, whose timings start afresh.
    connect(backend, &RunBackend::trainingStarted, this, [this] { m_stragglers.reset(); });
    m_stragglers.reset();
    m_systemNow.clear();
}

void RunSupervisor::onStepTiming(int rank, const StepTiming& timing)
{
    if (!m_backend) return;
    m_stragglers.setSustainMs(static_cast<qint64>(m_backend->job().stragglerAfterSec * 1000));
    const StragglerVerdict named = m_stragglers.update(rank, timing, m_clock.elapsed());
    if (named.rank < 0) return;
    int gpu = -1;
    for (const RankStatus& status : m_backend->ranks()) {
        if (status.rank == named.rank) gpu = status.gpu;
    }
    const QString message = stragglerMessage(named, m_backend->job().stragglerAfterSec, gpu, m_systemNow.value(named.rank));
    m_backend->recordStraggler(named.rank, message);
    Q_EMIT stragglerNamed(named.rank, message);
    Q_EMIT rankChanged(named.rank);
}

bool RunSupervisor::start(const JobSpec& job, QString* error)
{
    if (isActive()) {
        *error = QStringLiteral("a run is already active in %1").arg(runDir());
        return false;
    }
    return start(job, runPreflight(job), error);
}

bool RunSupervisor::start(const JobSpec& job, const PreflightResult& checked, QString* error)
{
    if (isActive()) {
        *error = QStringLiteral("a run is already active in %1").arg(runDir());
        return false;
    }
    if (!checked.ok()) {
        *error = checked.error;
        return false;
    }
    RunBackend* backend = job.slurm.enabled ? static_cast<RunBackend*>(new SlurmRun(this)) : new LocalRun(this);
    adopt(backend);
    if (!backend->start(job, checked, error)) return false;
    // The user's own choices (--trainer, --python, the app's fields) are remembered: a later job file may name them.
    if (!job.isScript() && !job.trainerPath.isEmpty() && !job.trainerPathFromFile) rememberTrainer(checked.trainerPath);
    if (job.isScript() && !job.pythonFromFile) rememberInterpreter(checked.interpreterPath);
    return true;
}

bool RunSupervisor::attach(const QString& runDir, QString* error)
{
    if (isActive()) {
        *error = QStringLiteral("a run is already active in %1").arg(this->runDir());
        return false;
    }
    auto* backend = new SlurmRun(this);
    adopt(backend);
    return backend->attach(runDir, error);
}

void RunSupervisor::requestStop()
{
    if (m_backend) m_backend->requestStop();
}

void RunSupervisor::kill()
{
    if (m_backend) m_backend->kill();
}

void RunSupervisor::requestCheckpoint()
{
    if (m_backend) m_backend->requestCheckpoint();
}

QString RunSupervisor::leaveRunning()
{
    if (!isActive()) return {};
    const QString line = m_backend->leaveRunning();
    if (line.isEmpty()) return {};
    m_backend->disconnect(this);
    m_backend->deleteLater();
    m_backend = nullptr;
    return line;
}

RunState RunSupervisor::state() const { return m_backend ? m_backend->state() : RunState::Idle; }
const JobSpec& RunSupervisor::job() const { return m_backend ? m_backend->job() : m_noJob; }
QString RunSupervisor::runDir() const { return m_backend ? m_backend->runDir() : QString(); }
QString RunSupervisor::socketPath() const { return m_backend ? m_backend->socketPath() : QString(); }
int RunSupervisor::masterPort() const { return m_backend ? m_backend->masterPort() : 0; }
int RunSupervisor::restartCount() const { return m_backend ? m_backend->restartCount() : 0; }
int RunSupervisor::portRetryCount() const { return m_backend ? m_backend->portRetryCount() : 0; }
qint64 RunSupervisor::totalSteps() const { return m_backend ? m_backend->totalSteps() : 0; }
qint64 RunSupervisor::stepsPerEpoch() const { return m_backend ? m_backend->stepsPerEpoch() : 0; }
qint64 RunSupervisor::stepsReceived() const { return m_backend ? m_backend->stepsReceived() : 0; }
qint64 RunSupervisor::rejectedConnections() const { return m_backend ? m_backend->rejectedConnections() : 0; }
QList<RankStatus> RunSupervisor::ranks() const
{
    QList<RankStatus> ranks = m_backend ? m_backend->ranks() : QList<RankStatus>{};
    const int slowest = m_stragglers.slowest().rank; // the launcher's line names the same one
    for (RankStatus& status : ranks) {
        status.straggler = m_stragglers.isStraggler(status.rank);
        status.slowest = status.rank == slowest;
    }
    return ranks;
}
qint64 RunSupervisor::processGroup() const { return m_backend ? m_backend->processGroup() : 0; }
RootCause RunSupervisor::rootCause() const { return m_backend ? m_backend->rootCause() : RootCause{}; }
QString RunSupervisor::jobId() const { return m_backend ? m_backend->jobId() : QString(); }
QString RunSupervisor::queueState() const { return m_backend ? m_backend->queueState() : QString(); }

} // namespace ringmaster::supervisor
