#include "ui/runs/slurm_queue_states.h"

#include <QtConcurrent>

namespace ringmaster::ui {
namespace {

using supervisor::SlurmJobState;
using supervisor::SlurmJobStatus;

bool isLive(const SlurmJobStatus& status)
{
    return status.state != SlurmJobState::Unknown && !status.isFinal();
}

QString statusWord(const SlurmJobStatus& status)
{
    switch (status.state) {
    case SlurmJobState::Pending: return QStringLiteral("queued");
    case SlurmJobState::Running:
    case SlurmJobState::Completing: return QStringLiteral("running");
    case SlurmJobState::Other: return status.stateText.toLower();   // suspended, preempted, ...
    default: return {};
    }
}

} // namespace

SlurmQueueStates::SlurmQueueStates(QObject* parent)
    : QObject(parent)
{
    m_repoll.setInterval(kRepollMs);
    connect(&m_repoll, &QTimer::timeout, this, &SlurmQueueStates::ask);
    connect(&m_asking, &QFutureWatcher<Answers>::finished, this, &SlurmQueueStates::onAnswered);
}

void SlurmQueueStates::watch(const QHash<QString, QString>& jobsByRun)
{
    m_jobs = jobsByRun;
    if (m_jobs.isEmpty()) m_repoll.stop();
    ask();
}

void SlurmQueueStates::ask()
{
    if (m_asking.isRunning()) {
        m_askAgain = true;   // the answer on its way may miss a run listed since
        return;
    }
    QStringList ids;
    for (const QString& id : std::as_const(m_jobs)) {
        const auto cached = m_answers.constFind(id);
        const bool fresh = cached != m_answers.constEnd() &&
                           (cached->status.isFinal() || cached->age.elapsed() < kFreshMs);
        if (!fresh && !ids.contains(id)) ids << id;
    }
    if (ids.isEmpty()) return;
    m_asking.setFuture(QtConcurrent::run([commands = m_commands, ids] {
        const supervisor::SlurmClient client(commands);
        Answers answers;
        QString unreachable;   // once Slurm could not be asked, the others would wait as long again
        for (const QString& id : ids) {
            SlurmJobStatus status;
            if (unreachable.isEmpty()) status = client.state(id);
            else status.error = unreachable;
            if (status.state == SlurmJobState::Unknown) unreachable = status.error;
            answers.append({id, status});
        }
        return answers;
    }));
}

void SlurmQueueStates::onAnswered()
{
    bool ended = false;
    for (const auto& [id, status] : m_asking.result()) {
        Answer& answer = m_answers[id];
        ended = ended || (isLive(answer.status) && status.isFinal());
        answer.status = status;
        answer.age.start();
    }
    bool anyLive = false;
    for (const QString& id : std::as_const(m_jobs)) anyLive = anyLive || isLive(m_answers.value(id).status);
    if (anyLive && !m_repoll.isActive()) m_repoll.start();
    if (!anyLive) m_repoll.stop();
    Q_EMIT updated();
    if (ended) Q_EMIT jobEnded();
    if (m_askAgain) {
        m_askAgain = false;
        ask();
    }
}

QHash<QString, RunQueueState> SlurmQueueStates::states() const
{
    QHash<QString, RunQueueState> states;
    for (auto it = m_jobs.constBegin(); it != m_jobs.constEnd(); ++it) {
        const auto answer = m_answers.constFind(it.value());
        if (answer == m_answers.constEnd()) continue;
        const SlurmJobStatus& status = answer->status;
        RunQueueState state;
        if (status.state == SlurmJobState::Unknown) {
            state.detail = tr("Slurm could not be asked about job %1: %2").arg(it.value(), status.error);
        } else if (isLive(status)) {
            state.status = statusWord(status);
            const bool reason = !status.reason.isEmpty() && status.reason != QLatin1String("None");
            state.detail = tr("Slurm job %1: %2%3").arg(it.value(), status.stateText,
                                                        reason ? QStringLiteral(" (%1)").arg(status.reason) : QString());
        } else {
            continue;   // ended: the run's files tell how
        }
        states.insert(it.key(), state);
    }
    return states;
}

} // namespace ringmaster::ui
