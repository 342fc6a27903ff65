#include "supervisor/run_types.h"

#include <QStringList>

#include <cmath>

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

QString formatDuration(double seconds)
{
    if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("--:--");
    const auto total = static_cast<qint64>(seconds + 0.5);
    const QLatin1Char zero('0');
    if (total >= 3600) return QStringLiteral("%1:%2:%3").arg(total / 3600).arg(total / 60 % 60, 2, 10, zero).arg(total % 60, 2, 10, zero);
    return QStringLiteral("%1:%2").arg(total / 60).arg(total % 60, 2, 10, zero);
}

} // namespace ringmaster::supervisor
