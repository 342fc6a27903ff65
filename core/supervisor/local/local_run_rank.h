#pragma once
// LocalRun's record of one rank (local_run.h keeps it opaque): the rank's process, its status as the ranks table
// shows it, and the time since it last showed progress. Included by local_run.cpp and local_run_ending.cpp only.

#include <QElapsedTimer>

#include <memory>

#include "supervisor/local/local_run.h"
#include "supervisor/rank_process.h"

namespace ringmaster::supervisor {

struct LocalRun::Rank
{
    std::unique_ptr<RankProcess> process;
    RankStatus status;
    QElapsedTimer sinceHeartbeat;
    // Its end was handled (onRankFinished), or it was never started. Not the process's state: the ends
    // arrive queued, and a rank whose process is gone may still have its end (a failure) waiting.
    bool ended = false;
};

} // namespace ringmaster::supervisor
