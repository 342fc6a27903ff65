#include "eval_table.h"

#include <QDir>
#include <QHeaderView>
#include <QLabel>
#include <QTableWidget>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <vector>

#include "csv_table.h"
#include "run_files.h"

namespace ringmaster::ui {
namespace {

constexpr int kValueDigits = 6;
constexpr int kWallTimeDecimals = 2;   // a short run's evaluations are a fraction of a second apart

std::optional<qint64> integerAt(const runs::CsvTable& table, const QList<QByteArray>& row, const char* name)
{
    const int column = table.column(name);
    return column < 0 ? std::nullopt : runs::parseCsvInteger(row.value(column));
}

std::optional<double> numberAt(const runs::CsvTable& table, const QList<QByteArray>& row, const char* name)
{
    const int column = table.column(name);
    return column < 0 ? std::nullopt : runs::parseCsvNumber(row.value(column));
}

QString number(double value) { return std::isfinite(value) ? QString::number(value, 'g', kValueDigits) : QStringLiteral("—"); }

} // namespace

EvalReading readRunEvals(const QString& runDir, qint64 upToStep)
{
    EvalReading reading;
    const QDir dir(runDir);
    const QString evalName = QString::fromLatin1(runs::kEvalFile);
    const auto eval = runs::readCsvTable(dir.filePath(evalName), evalName);
    reading.exists = eval.exists;
    reading.problems = eval.problems;
    if (!eval.exists) return reading;
    for (const char* column : runs::kEvalColumns) {
        if (eval.column(column) < 0) {
            reading.problems << QStringLiteral("%1 has no %2 column").arg(evalName, QLatin1String(column));
            return reading;
        }
    }
    // Each training step's wall time (the trainer writes a row per step, in order).
    const QString metricsName = QString::fromLatin1(runs::kMetricsFile);
    const auto metrics = runs::readCsvTable(dir.filePath(metricsName), metricsName);
    std::vector<std::pair<qint64, double>> walls;
    walls.reserve(static_cast<std::size_t>(metrics.rows.size()));
    for (const auto& row : metrics.rows) {
        const auto step = integerAt(metrics, row, runs::column::kStep);
        const auto wall = numberAt(metrics, row, runs::column::kWallTime);
        if (step && wall) walls.emplace_back(*step, *wall);
    }
    std::stable_sort(walls.begin(), walls.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

    for (int i = 0; i < eval.rows.size(); ++i) {
        const auto& row = eval.rows[i];
        const auto step = integerAt(eval, row, runs::column::kStep);
        const auto epoch = integerAt(eval, row, runs::column::kEpoch);
        const auto loss = numberAt(eval, row, runs::column::kValLoss);
        const auto accuracy = numberAt(eval, row, runs::column::kValAccuracy);
        if (!step || !epoch || !loss || !accuracy) {
            reading.problems << QStringLiteral("%1 line %2 is not a number where one is expected").arg(evalName).arg(eval.rowLines.value(i));
            continue;
        }
        if (upToStep >= 0 && *step > upToStep) continue;
        EvalRow entry{*epoch, *step, *loss, *accuracy, std::nullopt};
        // The last training step at or before the evaluated one (the trainer evaluates right after a step).
        const auto after = std::upper_bound(walls.begin(), walls.end(), *step, [](qint64 s, const auto& w) { return s < w.first; });
        if (after != walls.begin()) entry.wallTime = std::prev(after)->second;
        reading.rows.append(entry);
    }
    return reading;
}

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
