#pragma once
// One row per rank: rank, GPU, pid, state, current step, time since its last heartbeat, exit code or
// signal. A rank silent for longer than a few seconds while running is highlighted as stalled.

#include <QTableWidget>

#include "run_types.h"

namespace ringmaster::ui {

class RankTable : public QTableWidget
{
    Q_OBJECT

public:
    explicit RankTable(QWidget* parent = nullptr);
    void update(const QList<supervisor::RankStatus>& ranks);
    QString cell(int rank, int column) const;

    static constexpr qint64 kStalledAfterMs = 5000;
    enum Column { kRank, kGpu, kPid, kState, kStep, kHeartbeat, kExit, kColumns };
};

} // namespace ringmaster::ui
