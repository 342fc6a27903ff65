#include "scalar_table.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>

#include <algorithm>

#include "csv_table.h"
#include "run_files.h"
#include "wire.h"

namespace ringmaster::runs {
namespace {

QString unreadable(const char* file, int line)
{
    return QStringLiteral("%1 line %2 unreadable (not a number)").arg(QString::fromLatin1(file)).arg(line);
}

void fromScalarsCsv(const CsvTable& table, const QString& run, ScalarTable* out)
{
    const int stepColumn = table.column(protocol::kKeyStep);
    const int wallColumn = table.column(protocol::kKeyWallTime);
    const int nameColumn = table.column("name");
    const int valueColumn = table.column("value");
    if (stepColumn < 0 || nameColumn < 0 || valueColumn < 0) {
        out->problems << QStringLiteral("scalars.csv has no step, name or value column");
        return;
    }
    for (int i = 0; i < table.rows.size(); ++i) {
        const auto& row = table.rows[i];
        const auto step = parseCsvInteger(row[stepColumn]);
        const auto value = parseCsvNumber(row[valueColumn]);
        const auto wallTime = wallColumn >= 0 ? parseCsvNumber(row[wallColumn]) : std::nullopt;
        if (!step || !value || (wallColumn >= 0 && !wallTime)) {
            out->problems << unreadable(kScalarsFile, table.rowLines[i]);
            continue;
        }
        out->records.append({run, *step, wallTime, QString::fromUtf8(row[nameColumn]), *value});
    }
}

// The older record: one metrics.csv row per step and one eval.csv row per evaluation.
void fromMetricsAndEval(const CsvTable& metrics, const CsvTable& eval, const QString& run, ScalarTable* out)
{
    QHash<qint64, double> wallTimeOfStep;
    const int stepColumn = metrics.column(protocol::kKeyStep);
    const int wallColumn = metrics.column(protocol::kKeyWallTime);
    const char* const metricNames[] = {protocol::kKeyLoss, protocol::kKeyLr, protocol::kKeySamplesPerSec, protocol::kKeyEpoch};
    if (metrics.exists && !metrics.header.isEmpty() && stepColumn < 0) out->problems << QStringLiteral("metrics.csv has no step column");
    for (int i = 0; stepColumn >= 0 && i < metrics.rows.size(); ++i) {
        const auto& row = metrics.rows[i];
        const auto step = parseCsvInteger(row[stepColumn]);
        const auto wallTime = wallColumn >= 0 ? parseCsvNumber(row[wallColumn]) : std::nullopt;
        if (!step || (wallColumn >= 0 && !wallTime)) {
            out->problems << unreadable(kMetricsFile, metrics.rowLines[i]);
            continue;
        }
        if (wallTime) wallTimeOfStep.insert(*step, *wallTime);
        for (const char* name : metricNames) {
            const int column = metrics.column(name);
            if (column < 0) continue;
            const auto value = parseCsvNumber(row[column]);
            if (!value) {
                out->problems << unreadable(kMetricsFile, metrics.rowLines[i]);
                continue;
            }
            out->records.append({run, *step, wallTime, QString::fromLatin1(name), *value});
        }
    }
    const int evalStepColumn = eval.column(protocol::kKeyStep);
    if (eval.exists && !eval.header.isEmpty() && evalStepColumn < 0) out->problems << QStringLiteral("eval.csv has no step column");
    for (int i = 0; evalStepColumn >= 0 && i < eval.rows.size(); ++i) {
        const auto& row = eval.rows[i];
        const auto step = parseCsvInteger(row[evalStepColumn]);
        if (!step) {
            out->problems << unreadable(kEvalFile, eval.rowLines[i]);
            continue;
        }
        const auto wall = wallTimeOfStep.constFind(*step);
        const std::optional<double> wallTime = wall == wallTimeOfStep.constEnd() ? std::nullopt : std::optional<double>(*wall);
        for (const char* name : {protocol::kKeyValLoss, protocol::kKeyValAccuracy}) {
            const int column = eval.column(name);
            if (column < 0) continue;
            const auto value = parseCsvNumber(row[column]);
            if (!value) {
                out->problems << unreadable(kEvalFile, eval.rowLines[i]);
                continue;
            }
            out->records.append({run, *step, wallTime, QString::fromLatin1(name), *value});
        }
    }
    // Evaluations after the training rows of the same step; otherwise by step.
    std::stable_sort(out->records.begin(), out->records.end(),
                     [](const ScalarRecord& a, const ScalarRecord& b) { return a.step < b.step; });
}

} // namespace

ScalarTable readRunScalars(const QString& dirPath)
{
    requireRunDirectory(dirPath);
    const QDir dir(dirPath);
    const QString run = QFileInfo(QDir::cleanPath(dirPath)).fileName();
    ScalarTable out;
    const CsvTable scalars = readCsvTable(dir.filePath(QString::fromLatin1(kScalarsFile)), QString::fromLatin1(kScalarsFile));
    if (scalars.exists && !scalars.header.isEmpty()) {
        out.problems << scalars.problems;
        fromScalarsCsv(scalars, run, &out);
        return out;
    }
    const CsvTable metrics = readCsvTable(dir.filePath(QString::fromLatin1(kMetricsFile)), QString::fromLatin1(kMetricsFile));
    const CsvTable eval = readCsvTable(dir.filePath(QString::fromLatin1(kEvalFile)), QString::fromLatin1(kEvalFile));
    out.problems << scalars.problems << metrics.problems << eval.problems;
    fromMetricsAndEval(metrics, eval, run, &out);
    return out;
}

} // namespace ringmaster::runs
