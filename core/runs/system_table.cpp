#include "runs/system_table.h"

#include <QDir>
#include <QFileInfo>
#include <QHash>

#include <climits>

#include "runs/csv_table.h"
#include "runs/run_files.h"

namespace ringmaster::runs {

ScalarTable readRunSystem(const QString& dir)
{
    ScalarTable table;
    const QString file = QString::fromLatin1(protocol::kSystemFile);
    CsvStream csv(QDir(dir).filePath(file), file);
    if (!csv.exists()) return table;
    const int wallColumn = csv.column(column::kWallTime);
    const int rankColumn = csv.column(column::kRank);
    const int nameColumn = csv.column(column::kName);
    const int valueColumn = csv.column(column::kValue);
    if (wallColumn < 0 || rankColumn < 0 || nameColumn < 0 || valueColumn < 0) {
        table.problems << QStringLiteral("%1 has no wall_time, rank, name or value column").arg(file);
        return table;
    }
    const QString run = QFileInfo(QDir::cleanPath(dir)).fileName(); // as scalar_table.cpp names the run
    QHash<QString, qint64> samplesOf;
    QList<QByteArray> row;
    int line = 0;
    while (csv.next(&row, &line)) {
        const auto wallTime = parseCsvNumber(row[wallColumn]);
        const auto rank = parseCsvInteger(row[rankColumn]);
        const auto value = parseCsvNumber(row[valueColumn]);
        if (!wallTime || !rank || !value || *rank < 0 || *rank > INT_MAX || row[nameColumn].isEmpty()) {
            table.problems << QStringLiteral("%1 line %2 unreadable").arg(file).arg(line);
            continue;
        }
        const QString name = QString::fromStdString(protocol::systemSeriesName(static_cast<int>(*rank), row[nameColumn].toStdString()));
        table.records.append({run, samplesOf[name]++, wallTime, name, *value});
    }
    table.problems += csv.problems();
    return table;
}

} // namespace ringmaster::runs
