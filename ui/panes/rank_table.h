#pragma once
// One row per rank: rank, GPU, pid, state, current step, time since its last heartbeat, where its steps' time
// goes (data, compute, waiting for the others, optimizer: milliseconds a step, from its latest heartbeat), exit
// code or signal. A rank silent for longer than a few seconds while running is highlighted as stalled; the rank
// computing longest is in bold, and a rank the supervisor named a straggler (straggler_detector.h) is marked.

#include <QTableWidget>

#include "supervisor/run_types.h"

namespace ringmaster::ui {

class RankTable : public QTableWidget
{
    Q_OBJECT

public:
    explicit RankTable(QWidget* parent = nullptr);
    void update(const QList<supervisor::RankStatus>& ranks);
    QString cell(int rank, int column) const;

    static constexpr qint64 kStalledAfterMs = 5000;
    enum Column { kRank, kGpu, kPid, kState, kStep, kHeartbeat, kDataMs, kComputeMs, kWaitMs, kOptimizerMs, kExit, kColumns };
    // Whether the rank's compute cell is shown as the slowest (bold).
    bool isShownSlowest(int rank) const;
};

} // namespace ringmaster::ui
