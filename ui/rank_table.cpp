#include "rank_table.h"

#include <QHeaderView>

#include "rank_process.h"

namespace ringmaster::ui {

RankTable::RankTable(QWidget* parent)
    : QTableWidget(0, kColumns, parent)
{
    setHorizontalHeaderLabels({tr("Rank"), tr("GPU"), tr("PID"), tr("State"), tr("Step"), tr("Last heartbeat"), tr("Exit")});
    verticalHeader()->setVisible(false);
    horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setSelectionBehavior(QAbstractItemView::SelectRows);
}

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
        const QStringList values{QString::number(r.rank),
                                 r.gpu >= 0 ? QString::number(r.gpu) : tr("cpu"),
                                 r.pid > 0 ? QString::number(r.pid) : QString(),
                                 stalled && running ? tr("stalled") : supervisor::rankStateName(r.state),
                                 QString::number(r.step),
                                 running && r.msSinceHeartbeat >= 0 ? tr("%1 s ago").arg(r.msSinceHeartbeat / 1000.0, 0, 'f', 1) : QString(),
                                 exit};
        const QColor background = stalled ? QColor(255, 236, 179)
                                : r.state == supervisor::RankState::Failed ? QColor(255, 205, 210)
                                                                           : QColor();
        for (int column = 0; column < kColumns; ++column) {
            auto* cellItem = item(row, column);
            if (!cellItem) setItem(row, column, cellItem = new QTableWidgetItem);
            cellItem->setText(values.at(column));
            cellItem->setBackground(background);
        }
    }
}

QString RankTable::cell(int rank, int column) const
{
    const auto* cellItem = item(rank, column);
    return cellItem ? cellItem->text() : QString();
}

} // namespace ringmaster::ui
