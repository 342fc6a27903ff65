#include "ui/panes/eval_table.h"

#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "runs/csv_table.h"
#include "runs/run_files.h"

namespace ringmaster::ui {
namespace {

constexpr int kValueDigits = 6;
constexpr int kWallTimeDecimals = 2;   // a short run's evaluations are a fraction of a second apart

QString number(double value) { return std::isfinite(value) ? QString::number(value, 'g', kValueDigits) : QStringLiteral("—"); }

} // namespace

EvalTable::EvalTable(QWidget* parent)
    : QWidget(parent)
    , m_headline(new QLabel(this))
    , m_table(new QTableWidget(0, ColumnCount, this))
{
    m_table->setHorizontalHeaderLabels({tr("Epoch"), tr("Step"), tr("Val loss"), tr("Val accuracy"), tr("Wall time (s)")});
    m_table->horizontalHeaderItem(WallTime)->setToolTip(
        tr("Seconds since the run's start at the training step the evaluation followed (as metrics.csv counts)"));
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->verticalHeader()->setVisible(false);
    m_table->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
    m_headline->setWordWrap(true);
    m_headline->setTextFormat(Qt::RichText);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_headline);
    layout->addWidget(m_table, 1);
    showHeadline();
}

void EvalTable::noteStep(const supervisor::StepMetric& metric)
{
    m_lastStep = metric.step;
    m_lastWallTime = metric.wallTime;
}

void EvalTable::append(const supervisor::EvalMetric& metric)
{
    EvalRow row{metric.epoch, metric.step, metric.valLoss, metric.valAccuracy, std::nullopt};
    if (m_lastStep >= 0 && m_lastStep <= metric.step) row.wallTime = m_lastWallTime;
    addRow(row);
    showHeadline();
}

void EvalTable::truncateAfter(qint64 step)
{
    while (!m_rows.isEmpty() && m_rows.last().step > step) {
        m_rows.removeLast();
        m_table->removeRow(m_table->rowCount() - 1);
    }
    m_lastStep = -1;   // the restarted ranks report their steps again
    showHeadline();
}

void EvalTable::setReading(const EvalReading& reading)
{
    clear();
    m_problems = reading.problems;
    for (const EvalRow& row : reading.rows) addRow(row);
    showHeadline();
}

void EvalTable::clear()
{
    m_rows.clear();
    m_problems.clear();
    m_table->setRowCount(0);
    m_lastStep = -1;
    showHeadline();
}

void EvalTable::addRow(const EvalRow& row)
{
    m_rows.append(row);
    const int at = m_table->rowCount();
    m_table->insertRow(at);
    const QString texts[ColumnCount] = {QString::number(row.epoch), QString::number(row.step), number(row.valLoss), number(row.valAccuracy),
                                        row.wallTime ? QString::number(*row.wallTime, 'f', kWallTimeDecimals) : QString()};
    for (int column = 0; column < ColumnCount; ++column) {
        auto* item = new QTableWidgetItem(texts[column]);
        item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_table->setItem(at, column, item);
    }
}

QString EvalTable::cellText(int row, int column) const
{
    const QTableWidgetItem* item = m_table->item(row, column);
    return item ? item->text() : QString();
}

QString EvalTable::headline() const
{
    return m_headline->text();
}

void EvalTable::showHeadline()
{
    QString text;
    if (m_rows.isEmpty()) {
        text = tr("No evaluation yet (the built-in trainer evaluates on its validation split every --eval-every epochs).");
    } else {
        const auto best = std::max_element(m_rows.begin(), m_rows.end(), [](const EvalRow& a, const EvalRow& b) {
            return !std::isfinite(a.valAccuracy) || (std::isfinite(b.valAccuracy) && b.valAccuracy > a.valAccuracy);
        });
        text = tr("%n evaluation(s)", nullptr, static_cast<int>(m_rows.size()));
        if (std::isfinite(best->valAccuracy)) {
            text += tr("; best val accuracy %1 at step %2").arg(QString::number(best->valAccuracy, 'f', 4)).arg(best->step);
        }
    }
    text = text.toHtmlEscaped();
    if (!m_problems.isEmpty()) {
        text += QStringLiteral("<br><span style='color:#b00020'>%1 %2</span>")
                    .arg(tr("Not everything could be read:").toHtmlEscaped(), m_problems.join(QStringLiteral("; ")).toHtmlEscaped());
    }
    m_headline->setText(text);
}

} // namespace ringmaster::ui
