#pragma once
// The Devices panel's line about the trainer this app runs: its path and what it was built with ("LibTorch
// 2.11.0, CUDA 13.0, NCCL 2.28.9", or "CPU only"), read from its --version off the GUI thread when the window
// opens. With GPUs on this machine and a trainer without CUDA it says so in one line with the command that
// builds a GPU trainer, and blocksGpuRuns() keeps Start off for a GPU job (pre-flight would refuse it).
// Only the trainer the app itself finds is run here, never one a job file names (that is checked at Start).

#include <QFutureWatcher>
#include <QLabel>

#include "supervisor/trainer_info.h"

namespace ringmaster::ui {

class TrainerNote : public QLabel
{
    Q_OBJECT

public:
    explicit TrainerNote(QWidget* parent = nullptr);

    // Finds the app's trainer (supervisor::locateTrainer, no job file) and reads its --version again.
    void refresh();
    void setGpusPresent(bool present);
    // Who named the job's trainer: a loaded job file (checked at Start against the trainers the user runs or
    // chose), or the user ("Choose trainer…", the last job).
    enum class Chosen { ByTheJob, ByYou };
    // The trainer the job runs instead of the app's (launch.trainer_path; empty: none): not run before Start.
    void setJobTrainer(const QString& path, Chosen by = Chosen::ByTheJob);
    bool isChecking() const { return m_checking; }
    const supervisor::TrainerInfo& info() const { return m_info; }
    // GPUs here, and the trainer has no CUDA: the one line that says so, else empty.
    QString gpuProblem() const;
    bool blocksGpuRuns() const { return !gpuProblem().isEmpty(); }

Q_SIGNALS:
    void changed();

private:
    void display();

    QFutureWatcher<supervisor::TrainerInfo> m_watcher;
    supervisor::TrainerInfo m_info;
    bool m_checking = false; // from refresh() to the answer shown (the watcher stops running before that)
    bool m_gpus = false;
    QString m_jobTrainer;
    Chosen m_jobTrainerBy = Chosen::ByTheJob;
};

} // namespace ringmaster::ui
