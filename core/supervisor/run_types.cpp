#include "run_types.h"

#include <QStringList>

namespace ringmaster::supervisor {

QString runStateName(RunState state)
{
    switch (state) {
    case RunState::Idle: return QStringLiteral("idle");
    case RunState::Starting: return QStringLiteral("starting");
    case RunState::Running: return QStringLiteral("running");
    case RunState::Stopping: return QStringLiteral("stopping");
    case RunState::Completed: return QStringLiteral("completed");
    case RunState::Failed: return QStringLiteral("failed");
    case RunState::Stopped: return QStringLiteral("stopped");
    }
    return QStringLiteral("unknown");
}

bool isFinal(RunState state)
{
    return state == RunState::Completed || state == RunState::Failed || state == RunState::Stopped;
}

QString rankStateName(RankState state)
{
    switch (state) {
    case RankState::Pending: return QStringLiteral("pending");
    case RankState::Starting: return QStringLiteral("starting");
    case RankState::Running: return QStringLiteral("running");
    case RankState::Exited: return QStringLiteral("exited");
    case RankState::Failed: return QStringLiteral("failed");
    case RankState::Hung: return QStringLiteral("hung");
    }
    return QStringLiteral("unknown");
}

QString RootCause::summary() const
{
    if (rank < 0) return reason;
    return QStringLiteral("rank %1 %2").arg(rank).arg(reason);
}

} // namespace ringmaster::supervisor
