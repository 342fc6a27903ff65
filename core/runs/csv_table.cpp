#include "csv_table.h"

#include <QFile>

#include <cmath>
#include <limits>

namespace ringmaster::runs {
namespace {

struct Record
{
    QList<QByteArray> fields;
    int line = 0;
    bool complete = false;   // ended by a line break outside quotes
};

// Splits the file into records; the last one is incomplete when the file does not end with a line break.
// Lines without quotes (nearly all) are split at once; a quoted field switches to the character loop.
QList<Record> splitRecords(const QByteArray& bytes)
{
    QList<Record> records;
    Record current;
    QByteArray field;
    bool inQuotes = false;
    bool any = false;
    int line = 1;
    current.line = 1;
    const qsizetype size = bytes.size();
    for (qsizetype i = 0; i < size; ++i) {
        if (!inQuotes && !any && field.isEmpty()) {
            const qsizetype end = bytes.indexOf('\n', i);
            if (end >= 0) {
                const QByteArray text = QByteArray::fromRawData(bytes.constData() + i, end - i);
                if (!text.contains('"')) {
                    Record record;
                    record.line = line++;
                    record.complete = true;
                    record.fields = (text.endsWith('\r') ? text.chopped(1) : text).split(',');
                    for (QByteArray& f : record.fields) f.detach();   // own the bytes, not borrow them
                    records.append(record);
                    current.line = line;
                    i = end;
                    continue;
                }
            }
        }
        const char c = bytes[i];
        if (inQuotes) {
            if (c == '"') {
                if (i + 1 < size && bytes[i + 1] == '"') {
                    field += '"';
                    ++i;
                } else {
                    inQuotes = false;
                }
            } else {
                if (c == '\n') ++line;
                field += c;
            }
            continue;
        }
        if (c == '"') {
            inQuotes = true;
            any = true;
        } else if (c == ',') {
            current.fields.append(field);
            field.clear();
            any = true;
        } else if (c == '\n') {
            if (!field.isEmpty() && field.endsWith('\r')) field.chop(1);
            current.fields.append(field);
            current.complete = true;
            records.append(current);
            field.clear();
            current = Record();
            any = false;
            current.line = ++line;
        } else {
            field += c;
            any = true;
        }
    }
    if (any || !field.isEmpty()) {
        current.fields.append(field);
        current.complete = false;
        records.append(current);
    }
    return records;
}

} // namespace

int CsvTable::column(const char* name) const
{
    return static_cast<int>(header.indexOf(QByteArray(name)));
}

CsvTable readCsvTable(const QString& path, const QString& displayName)
{
    CsvTable table;
    QFile file(path);
    if (!file.exists()) return table;
    table.exists = true;
    if (!file.open(QIODevice::ReadOnly)) {
        table.problems << QStringLiteral("%1 cannot be read: %2").arg(displayName, file.errorString());
        return table;
    }
    QList<Record> records = splitRecords(file.readAll());
    if (records.isEmpty()) {
        table.problems << QStringLiteral("%1 is empty (no header)").arg(displayName);
        return table;
    }
    table.header = records.takeFirst().fields;
    const auto width = table.header.size();
    for (const Record& record : records) {
        if (!record.complete) {
            table.problems << QStringLiteral("%1 line %2 truncated (no line end)").arg(displayName).arg(record.line);
        } else if (record.fields.size() == 1 && record.fields.first().isEmpty()) {
            continue;   // a blank line (the scalar recorder ends a cut-short row with one)
        } else if (record.fields.size() != width) {
            table.problems << QStringLiteral("%1 line %2 truncated (%3 of %4 fields)")
                                  .arg(displayName).arg(record.line).arg(record.fields.size()).arg(width);
        } else {
            table.rows.append(record.fields);
            table.rowLines.append(record.line);
        }
    }
    return table;
}

std::optional<double> parseCsvNumber(const QByteArray& field)
{
    const QByteArray text = field.trimmed();
    if (text == "nan" || text == "-nan" || text == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (text == "inf" || text == "+inf") return std::numeric_limits<double>::infinity();
    if (text == "-inf") return -std::numeric_limits<double>::infinity();
    bool ok = false;
    const double value = text.toDouble(&ok);
    if (!ok) return std::nullopt;
    return value;
}

std::optional<qint64> parseCsvInteger(const QByteArray& field)
{
    bool ok = false;
    const qint64 value = field.trimmed().toLongLong(&ok);
    if (!ok) return std::nullopt;
    return value;
}

QString csvField(const QString& text)
{
    if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) && !text.contains(QLatin1Char('\n')) &&
        !text.contains(QLatin1Char('\r'))) {
        return text;
    }
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

} // namespace ringmaster::runs
