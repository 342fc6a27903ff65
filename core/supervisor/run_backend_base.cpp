#include "supervisor/run_backend_base.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonObject>

#include <algorithm>

#include "protocol/run_layout.h"
#include "protocol/wire.h"
#include "supervisor/metric_server.h"
#include "supervisor/stack_dumps.h" // the unique_ptr members's destructors
#include "supervisor/system_files.h"
#include "supervisor/tensorboard_follower.h"

namespace ringmaster::supervisor {
namespace {

QString key(const char* name)
{
    return QString::fromLatin1(name);
}

} // namespace

RunBackendBase::RunBackendBase(QObject* parent)
    : RunBackend(parent)
{
    m_escalation.setSingleShot(true);
}

RunBackendBase::~RunBackendBase() = default;

QString RunBackendBase::socketPath() const
{
    return m_server ? m_server->socketPath() : QString();
}

qint64 RunBackendBase::rejectedConnections() const
{
    return m_server ? m_server->rejectedConnections() : 0;
}

void RunBackendBase::recordStraggler(int rank, const QString& message)
{
    log(QStringLiteral("straggler: ") + message);
    m_stragglers.append(stragglerRecord(rank, message));
}

void RunBackendBase::adoptJob(const JobSpec& job, const PreflightResult& checked)
{
    m_job = job;
    m_checked = checked;
    if (!job.isScript()) return;
    m_job.script = checked.scriptPath;
    m_job.python = checked.interpreterPath;
    if (!m_job.tensorboardDir.isEmpty()) m_job.tensorboardDir = QFileInfo(m_job.tensorboardDir).absoluteFilePath();
}

void RunBackendBase::watchWrites()
{
    m_dir.setWriteFailureHandler([this](const QString& line) {
        m_dir.log(line); // the launcher's log; the terminal and the window say it as a problem, once
        Q_EMIT problem(line);
    });
}

void RunBackendBase::openScalarRecord()
{
    // The run goes on when scalars.csv cannot be written: the charts still get the values.
    if (!m_scalarRecorder.open(m_dir.path())) m_dir.reportWriteFailure(m_scalarRecorder.path(), m_scalarRecorder.error());
    m_lineParser = MetricLineParser(m_job.isScript() ? m_job.metricPatterns : QStringList{QString::fromLatin1(kMetricPatternNone)});
}

void RunBackendBase::recordScalars(const ScalarBatch& scalars, double wallTime)
{
    if (scalars.values.isEmpty()) return;
    scalarsArriving();
    m_lastScalarStep = std::max(m_lastScalarStep, scalars.step);
    for (const Scalar& scalar : scalars.values) m_lastScalars.insert(scalar.name, scalar.value);
    const bool written = wallTime >= 0 ? m_scalarRecorder.append(scalars, wallTime) : m_scalarRecorder.append(scalars);
    if (m_scalarRecorder.isOpen() && !written) m_dir.reportWriteFailure(m_scalarRecorder.path(), m_scalarRecorder.error());
    Q_EMIT scalarsReceived(scalars);
}

void RunBackendBase::followTensorBoard()
{
    m_tensorboard.reset();
    if (!m_job.isScript()) return; // the trainer reports over the socket (and writes RUN_DIR/tb for TensorBoard)
    const QString folder = m_job.tensorboardDir.isEmpty() ? runDir() : m_job.tensorboardDir;
    m_tensorboard = std::make_unique<TensorBoardFollower>(folder);
    m_tensorboard->ignoreFolder(QDir(runDir()).filePath(QString::fromLatin1(protocol::kSystemTensorBoardFolder))); // the launcher's own
    connect(m_tensorboard.get(), &TensorBoardFollower::scalar, this, [this](qint64 step, const QString& tag, double value, double wallTime) {
        ScalarBatch batch;
        batch.step = step;
        batch.values.append(Scalar{tag, value});
        recordScalars(batch, wallTime);
    });
    connect(m_tensorboard.get(), &TensorBoardFollower::warning, this, &RunBackendBase::log);
    // A folder of the user's own may hold earlier runs' files (lightning_logs/version_0, runs/…): not this run's.
    const int earlier = m_job.tensorboardDir.isEmpty() ? 0 : m_tensorboard->skipFilesPresentNow();
    log(QStringLiteral("following TensorBoard event files under %1%2")
            .arg(folder, earlier > 0 ? QStringLiteral(" (new files only: %1 there already are skipped)").arg(earlier) : QString()));
    m_tensorboard->start();
}

void RunBackendBase::onStatus(const QString& status, const QJsonObject& frame)
{
    if (status != QLatin1String(protocol::kStatusRunning)) {
        m_finalStatus = status;
        return;
    }
    m_totalSteps = static_cast<qint64>(frame.value(key(protocol::kKeyTotalSteps)).toDouble(static_cast<double>(m_totalSteps)));
    m_stepsPerEpoch = static_cast<qint64>(frame.value(key(protocol::kKeyStepsPerEpoch)).toDouble(static_cast<double>(m_stepsPerEpoch)));
    const QString message = frame.value(key(protocol::kKeyMessage)).toString();
    if (!message.isEmpty()) log(QStringLiteral("rank 0: %1").arg(message));
    const auto from = static_cast<qint64>(frame.value(key(protocol::kKeyResumedFromStep)).toDouble(0));
    trainingResumesFrom(from);
    Q_EMIT trainingStarted(from);
    if (m_state == RunState::Starting) setState(RunState::Running);
}

void RunBackendBase::setState(RunState state)
{
    if (m_state == state) return;
    m_state = state;
    log(QStringLiteral("state: %1").arg(runStateName(state)));
    Q_EMIT stateChanged(state);
}

void RunBackendBase::log(const QString& message)
{
    m_dir.log(message);
    Q_EMIT logLine(-1, message);
}

void RunBackendBase::concludeRun(RunDirectory::Outcome outcome, const QString& endedLine, const QStringList& moreLines)
{
    m_escalation.stop();
    if (m_tensorboard) {
        m_tensorboard->pollNow(); // what the script wrote just before it exited
        m_tensorboard->stop();
    }
    outcome.metricsReceived = m_stepsReceived;
    outcome.rootCause = m_verdict.rootCause();
    outcome.lastStep = m_lastScalarStep;
    outcome.lastScalars = m_lastScalars;
    outcome.stragglers = m_stragglers;
    m_dir.removeRankLeftovers(outcome.worldSize); // every rank is gone
    // Only with the final status on disk may the run be resumed, by this process or another; without it the lock
    // stays until this process ends, and the run is then listed interrupted.
    if (m_dir.patchSummary(outcome)) m_dir.releaseRunLock();
    if (outcome.state == RunState::Failed) {
        log(QStringLiteral("FAILED: %1").arg(outcome.rootCause.summary()));
        for (const auto& line : outcome.rootCause.lastLines) log(QStringLiteral("  | %1").arg(line));
    } else {
        log(endedLine);
    }
    for (const QString& line : moreLines) log(line);
    setState(outcome.state);
    Q_EMIT finished(outcome.state);
}

} // namespace ringmaster::supervisor
