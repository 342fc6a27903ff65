#pragma once
// What srun says about the tasks that ended badly, read from the batch script's output
// (RUN_DIR/slurm/batch-<job id>.log), e.g.
//   srun: error: node07: task 1: Exited with exit code 3
//   srun: error: node07: tasks 0,2-3: Killed
// Under Slurm there is no per-rank process to wait for: these lines are how the supervisor learns which
// rank failed and how, so that a Slurm run's failure report names the rank as a local one does.

#include <QList>
#include <QString>
#include <QStringList>

namespace ringmaster::supervisor {

struct TaskFailure
{
    int task = -1;        // the rank (SLURM_PROCID)
    QString host;
    int exitCode = 0;     // "Exited with exit code N"
    int exitSignal = 0;   // "Killed" 9, "Terminated" 15, "Segmentation fault" 11, "Aborted" 6, ...
    QString text;         // srun's words after the task list
};

// Every task named by srun's error lines, in the order they appear (a task named twice keeps its first).
QList<TaskFailure> parseTaskFailures(const QStringList& batchLogLines);

} // namespace ringmaster::supervisor
