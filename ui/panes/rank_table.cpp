#include "ui/panes/rank_table.h"

#include <QHeaderView>

#include "supervisor/rank_process.h"
#include "supervisor/straggler_detector.h"

namespace ringmaster::ui {

RankTable::RankTable(QWidget* parent)
    : QTableWidget(0, kColumns, parent)
{
    setHorizontalHeaderLabels({tr("Rank"), tr("GPU"), tr("PID"), tr("State"), tr("Step"), tr("Last heartbeat"), tr("Data ms"),
                               tr("Compute ms"), tr("Wait ms"), tr("Optimizer ms"), tr("Exit")});
    horizontalHeaderItem(kComputeMs)->setToolTip(tr("Forward and backward per step, without the waits on gradient buckets"));
    horizontalHeaderItem(kWaitMs)->setToolTip(tr("Per step, waiting for the other ranks (all-reduces, broadcasts): "
                                                 "the ranks that wait are not the slow ones"));
    verticalHeader()->setVisible(false);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
}

namespace {

QString milliseconds(const supervisor::StepTiming& timing, double value)
{
    return timing.valid() ? QString::number(value, 'f', value < 10 ? 2 : 1) : QString();
}

} // namespace

void RankTable::update(const QList<supervisor::RankStatus>& ranks)
{
    setRowCount(static_cast<int>(ranks.size()));
    for (int row = 0; row < ranks.size(); ++row) {
        const auto& r = ranks.at(row);
        const bool running = r.state == supervisor::RankState::Running || r.state == supervisor::RankState::Starting;
        const bool stalled = r.state == supervisor::RankState::Hung || (running && r.msSinceHeartbeat > kStalledAfterMs);
        QString exit;
        if (r.state == supervisor::RankState::Exited || r.state == supervisor::RankState::Failed) {
            exit = r.exitSignal ? supervisor::signalName(r.exitSignal) : QString::number(r.exitCode);
        }
        const QString state = stalled && running ? tr("stalled")
                              : r.straggler && running ? tr("straggler")
                                                       : supervisor::rankStateName(r.state);
        const QStringList values{QString::number(r.rank),
                                 r.gpu >= 0 ? QString::number(r.gpu) : tr("cpu"),
                                 r.pid > 0 ? QString::number(r.pid) : QString(),
                                 state,
                                 QString::number(r.step),
                                 running && r.msSinceHeartbeat >= 0 ? tr("%1 s ago").arg(r.msSinceHeartbeat / 1000.0, 0, 'f', 1) : QString(),
                                 milliseconds(r.timing, r.timing.dataMs),
                                 milliseconds(r.timing, r.timing.computeMs),
                                 milliseconds(r.timing, r.timing.syncMs),
                                 milliseconds(r.timing, r.timing.optimizerMs),
                                 exit};
        const QColor background = stalled ? QColor(255, 236, 179)
                                : r.state == supervisor::RankState::Failed ? QColor(255, 205, 210)
                                : r.straggler && running                   ? QColor(255, 224, 178)
                                                                           : QColor();
        for (int column = 0; column < kColumns; ++column) {
            auto* cellItem = item(row, column);
            if (!cellItem) setItem(row, column, cellItem = new QTableWidgetItem);
            cellItem->setText(values.at(column));
            cellItem->setBackground(background);
            QFont font = cellItem->font();
            font.setBold(column == kComputeMs && r.slowest);
            cellItem->setFont(font);
        }
        item(row, kState)->setToolTip(r.straggler ? tr("Computes at least %1x slower than the other ranks: they wait for it")
                                                        .arg(supervisor::StragglerDetector::kRatio)
                                                  : QString());
    }
}

bool RankTable::isShownSlowest(int rank) const
{
    const auto* cellItem = item(rank, kComputeMs);
    return cellItem && cellItem->font().bold();
}

QString RankTable::cell(int rank, int column) const
{
    const auto* cellItem = item(rank, column);
    return cellItem ? cellItem->text() : QString();
}

} // namespace ringmaster::ui
