#pragma once
// Why a Slurm run failed, in the words a local failure uses: the rank srun names in the batch script's
// output (task_failures.h) with its exit code or signal, the host, and its last log lines, ranked as
// the local supervisor ranks rank ends (failure_verdict.h: a task srun killed because another exited
// non-zero is collateral, not the cause). When Slurm ended the job itself (time limit, out of memory,
// node failure, cancelled outside Ringmaster), the tasks srun reports as terminated or killed are its
// consequence: Slurm's end is the cause, with srun's words about the tasks appended, unless a task had
// exited with a code of its own. When no task is named, Slurm's end is the cause too (or the batch
// script's exit code with its last lines), each with what to do about it.

#include <QString>
#include <QStringList>

#include <vector>

#include "supervisor/failure_verdict.h"
#include "supervisor/slurm/slurm_client.h"

namespace ringmaster::supervisor {

inline constexpr int kSlurmTailLinesInReport = 8;

struct SlurmEnd
{
    SlurmJobStatus status;
    QString jobId;
    QString batchLogPath;
    QStringList batchLines;                              // the batch script's output
    const std::vector<QStringList>* rankLines = nullptr; // per rank, its last log lines
    bool script = false;                                 // a user's script (exit codes are not the trainer's)
};

// Records the root cause in *verdict (which may already hold one from the ranks' own reports).
void judgeSlurmFailure(const SlurmEnd& end, FailureVerdict* verdict);

} // namespace ringmaster::supervisor
