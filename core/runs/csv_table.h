#pragma once
// Reads one of a run's CSV files (metrics.csv, eval.csv, scalars.csv) into a header and rows, tolerating
// damage: a row with the wrong number of fields or an unclosed quote, and a last row without its line end
// (a write cut short by a kill or a full disk), are left out and described by line number
// ("metrics.csv line 57 truncated"), so that a damaged run is read with what is readable.
// Fields may be quoted as RFC 4180 says (scalars.csv quotes names holding commas, quotes or line breaks).

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace ringmaster::runs {

struct CsvTable
{
    bool exists = false;
    QList<QByteArray> header;
    QList<QList<QByteArray>> rows;
    QList<int> rowLines;        // the 1-based line each row starts on
    QStringList problems;       // human-readable, each naming the file

    // The column's index, or -1.
    int column(const char* name) const;
};

// Reads PATH; problems name the file as DISPLAY_NAME. A missing file gives exists == false and no problem.
CsvTable readCsvTable(const QString& path, const QString& displayName);

// A number as the recorders write it (the shortest exact form, 17 significant digits, %.9g in older runs,
// "nan", "inf"); nullopt when it is not one.
std::optional<double> parseCsvNumber(const QByteArray& field);
std::optional<qint64> parseCsvInteger(const QByteArray& field);

// A CSV field: quoted (quotes doubled) when it holds a comma, a quote or a line break.
QString csvField(const QString& text);

} // namespace ringmaster::runs
