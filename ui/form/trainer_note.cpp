#include "ui/form/trainer_note.h"

#include <QtConcurrent>

#include "supervisor/job_spec.h"
#include "supervisor/preflight.h"

namespace ringmaster::ui {

TrainerNote::TrainerNote(QWidget* parent)
    : QLabel(parent)
{
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(&m_watcher, &QFutureWatcher<supervisor::TrainerInfo>::finished, this, [this] {
        m_info = m_watcher.result();
        m_checking = false;
        display();
    });
    refresh();
}

void TrainerNote::refresh()
{
    const QString path = supervisor::locateTrainer(supervisor::JobSpec{});
    m_info = {};
    m_info.path = path;
    if (path.isEmpty()) {
        m_info.error = tr("ringmaster-trainer not found: build it, or install the package");
        display();
        return;
    }
    setText(tr("Trainer: %1 (checking…)").arg(path));
    m_checking = true;
    m_watcher.setFuture(QtConcurrent::run([path] { return supervisor::describeTrainer(path); }));
}

void TrainerNote::setJobTrainer(const QString& path, Chosen by)
{
    if (m_jobTrainer == path && m_jobTrainerBy == by) return;
    m_jobTrainer = path;
    m_jobTrainerBy = by;
    if (!isChecking()) display();
}

void TrainerNote::setGpusPresent(bool present)
{
    if (m_gpus == present) return;
    m_gpus = present;
    if (!isChecking()) display();
}

QString TrainerNote::gpuProblem() const
{
    if (!m_gpus || isChecking() || !m_info.known() || m_info.hasCuda()) return {};
    return supervisor::trainerWithoutCudaMessage(m_info);
}

void TrainerNote::display()
{
    const QString problem = gpuProblem();
    const bool bad = !problem.isEmpty() || !m_info.error.isEmpty();
    QString text = !problem.isEmpty() ? problem
                   : m_info.known()   ? tr("Trainer: %1 (%2)").arg(m_info.path, m_info.summary())
                                      : tr("Trainer: %1").arg(m_info.error);
    if (!m_jobTrainer.isEmpty() && m_jobTrainerBy == Chosen::ByYou) {
        text += QLatin1Char('\n') + tr("This job runs the trainer you chose: %1 (read when you press Start)").arg(m_jobTrainer);
    } else if (!m_jobTrainer.isEmpty()) {
        text += QLatin1Char('\n') + tr("The job names the trainer %1: it is checked when you press Start, and not run before; "
                                       "a job file may name only the trainer above or one you chose").arg(m_jobTrainer);
    }
    setText(text);
    setToolTip(tr("The ringmaster-trainer this app runs for the built-in trainer (a job file's trainer is checked at Start)"));
    setStyleSheet(bad ? QStringLiteral("color: #611a15;") : QStringLiteral("color: #455a64;"));
    Q_EMIT changed();
}

} // namespace ringmaster::ui
