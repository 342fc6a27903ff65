#pragma once
// Reads one of a run's CSV files (metrics.csv, eval.csv, scalars.csv) into a header and rows, tolerating
// damage: a row with the wrong number of fields or an unclosed quote, and a last row without its line end
// (a write cut short by a kill or a full disk), are left out and described by line number
// ("metrics.csv line 57 truncated"), so that a damaged run is read with what is readable.
// Fields may be quoted as RFC 4180 says (scalars.csv quotes names holding commas, quotes or line breaks).
// CsvStream reads one row at a time in bounded memory (1 MiB chunks; a record over kMaxRecordBytes ends the
// read with a problem; at most kMaxProblems problems are listed, the rest counted), so that a week-long run's
// files (gigabytes) can be listed and drawn; seekTail() jumps to the last bytes for the last values.

#include <QByteArray>
#include <QFile>
#include <QList>
#include <QPair>
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

// Reads PATH whole; problems name the file as DISPLAY_NAME. A missing file gives exists == false and no problem.
// For files that may be large, stream them with CsvStream instead.
CsvTable readCsvTable(const QString& path, const QString& displayName);

class CsvStream
{
public:
    static constexpr qsizetype kMaxRecordBytes = 16 * 1024 * 1024;
    static constexpr int kMaxProblems = 20;

    // Opens PATH and reads its header.
    CsvStream(const QString& path, const QString& displayName);
    bool exists() const { return m_exists; }
    const QList<QByteArray>& header() const { return m_header; }
    int column(const char* name) const;
    // The next row with as many fields as the header (others become problems); false at the end.
    bool next(QList<QByteArray>* fields, int* line);
    // Skips to the last BYTES of the file (from the first whole line there): the last rows, for the last
    // values of a long file. Line numbers are then 0.
    void seekTail(qint64 bytes);
    bool readingTail() const { return m_tail; }
    QStringList problems() const;

private:
    bool nextRecord(QList<QByteArray>* fields, int* line);
    bool refill();
    void problem(const QString& text);

    QFile m_file;
    QString m_name;
    bool m_exists = false;
    bool m_ended = false;
    bool m_tail = false;
    QList<QByteArray> m_header;
    QByteArray m_pending;                      // bytes read, beginning at a record boundary
    QList<QPair<QList<QByteArray>, int>> m_ready; // records split, not yet returned
    int m_line = 1;
    QStringList m_problems;
    qint64 m_moreProblems = 0;
};

// A number as the recorders write it (the shortest exact form, 17 significant digits, %.9g in older runs,
// "nan", "inf"); nullopt when it is not one.
std::optional<double> parseCsvNumber(const QByteArray& field);
std::optional<qint64> parseCsvInteger(const QByteArray& field);

} // namespace ringmaster::runs
