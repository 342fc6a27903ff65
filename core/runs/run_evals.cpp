#include "runs/run_evals.h"

#include <QDir>

#include <algorithm>
#include <iterator>
#include <vector>

#include "runs/csv_table.h"
#include "runs/run_files.h"

namespace ringmaster::runs {
namespace {

std::optional<qint64> integerAt(const CsvTable& table, const QList<QByteArray>& row, const char* name)
{
    const int column = table.column(name);
    return column < 0 ? std::nullopt : parseCsvInteger(row.value(column));
}

std::optional<double> numberAt(const CsvTable& table, const QList<QByteArray>& row, const char* name)
{
    const int column = table.column(name);
    return column < 0 ? std::nullopt : parseCsvNumber(row.value(column));
}

} // namespace

EvalReading readRunEvals(const QString& runDir, qint64 upToStep)
{
    EvalReading reading;
    const QDir dir(runDir);
    const QString evalName = QString::fromLatin1(kEvalFile);
    const auto eval = readCsvTable(dir.filePath(evalName), evalName);
    reading.exists = eval.exists;
    reading.problems = eval.problems;
    if (!eval.exists) return reading;
    for (const char* column : kEvalColumns) {
        if (eval.column(column) < 0) {
            reading.problems << QStringLiteral("%1 has no %2 column").arg(evalName, QLatin1String(column));
            return reading;
        }
    }
    // Each training step's wall time (the trainer writes a row per step, in order).
    const QString metricsName = QString::fromLatin1(kMetricsFile);
    const auto metrics = readCsvTable(dir.filePath(metricsName), metricsName);
    std::vector<std::pair<qint64, double>> walls;
    walls.reserve(static_cast<std::size_t>(metrics.rows.size()));
    for (const auto& row : metrics.rows) {
        const auto step = integerAt(metrics, row, column::kStep);
        const auto wall = numberAt(metrics, row, column::kWallTime);
        if (step && wall) walls.emplace_back(*step, *wall);
    }
    std::stable_sort(walls.begin(), walls.end(), [](const auto& a, const auto& b) { return a.first < b.first; });

    for (int i = 0; i < eval.rows.size(); ++i) {
        const auto& row = eval.rows[i];
        const auto step = integerAt(eval, row, column::kStep);
        const auto epoch = integerAt(eval, row, column::kEpoch);
        const auto loss = numberAt(eval, row, column::kValLoss);
        const auto accuracy = numberAt(eval, row, column::kValAccuracy);
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

} // namespace ringmaster::runs
