#include "runs/csv_table.h"

#include <QFile>

#include <utility>

#include <cmath>
#include <limits>

namespace ringmaster::runs {
namespace {

constexpr qint64 kChunkBytes = 1 << 20;

struct Record
{
    QList<QByteArray> fields;
    int line = 0;
    bool complete = false;   // ended by a line break outside quotes
};

// Splits BYTES (which begin at a record boundary, line FIRST_LINE) into records. Complete ones are returned;
// *consumed is where the last complete one ended, and *nextLine the line after it: the rest is an unfinished
// record, kept for the next chunk (or, at the end of the file, reported cut short). Lines without quotes (nearly
// all) are split at once; a quoted field switches to the character loop.
QList<Record> splitRecords(const QByteArray& bytes, int firstLine, qsizetype* consumed, int* nextLine)
{
    QList<Record> records;
    Record current;
    QByteArray field;
    bool inQuotes = false;
    bool any = false;
    int line = firstLine;
    current.line = firstLine;
    *consumed = 0;
    *nextLine = firstLine;
    const qsizetype size = bytes.size();
    for (qsizetype i = 0; i < size; ++i) {
        if (!inQuotes && !any && field.isEmpty()) {
            const qsizetype end = bytes.indexOf('\n', i);
            if (end < 0) break; // an unfinished record without quotes: the rest waits for more bytes
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
                *consumed = end + 1;
                *nextLine = line;
                continue;
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
            *consumed = i + 1;
            *nextLine = line;
        } else {
            field += c;
            any = true;
        }
    }
    return records;
}

} // namespace

CsvStream::CsvStream(const QString& path, const QString& displayName)
    : m_file(path)
    , m_name(displayName)
{
    if (!m_file.exists()) return;
    m_exists = true;
    if (!m_file.open(QIODevice::ReadOnly)) {
        problem(QStringLiteral("%1 cannot be read: %2").arg(displayName, m_file.errorString()));
        m_ended = true;
        return;
    }
    QList<QByteArray> header;
    int line = 0;
    if (!nextRecord(&header, &line)) {
        if (m_problems.isEmpty()) problem(QStringLiteral("%1 is empty (no header)").arg(displayName));
        return;
    }
    m_header = header;
}

void CsvStream::problem(const QString& text)
{
    if (m_problems.size() < kMaxProblems) m_problems << text;
    else ++m_moreProblems;
}

QStringList CsvStream::problems() const
{
    QStringList all = m_problems;
    if (m_moreProblems > 0) all << QStringLiteral("%1: %2 more problems like these").arg(m_name).arg(m_moreProblems);
    return all;
}

bool CsvStream::refill()
{
    if (m_ended) return false;
    const QByteArray chunk = m_file.read(kChunkBytes);
    if (chunk.isEmpty()) {
        m_ended = true;
        return false;
    }
    m_pending.append(chunk);
    return true;
}

bool CsvStream::nextRecord(QList<QByteArray>* fields, int* line)
{
    while (true) {
        if (m_ready.isEmpty()) {
            qsizetype consumed = 0;
            int nextLine = m_line;
            if (!m_pending.isEmpty()) {
                const QList<Record> records = splitRecords(m_pending, m_line, &consumed, &nextLine);
                for (const Record& record : records) m_ready.append({record.fields, record.line});
                m_pending.remove(0, consumed);
                m_line = nextLine;
            }
            if (m_ready.isEmpty()) {
                if (refill()) {
                    // A record longer than the bound (an unclosed quote, a line without end) is not held whole.
                    if (m_pending.size() > kMaxRecordBytes) {
                        problem(QStringLiteral("%1 line %2 is longer than %3 bytes: the rest of the file is not read")
                                    .arg(m_name).arg(m_line).arg(kMaxRecordBytes));
                        m_pending.clear();
                        m_ended = true;
                        return false;
                    }
                    continue;
                }
                if (m_header.isEmpty() && !m_pending.trimmed().isEmpty()) {
                    // A header without its line end is still the header (a file cut short right after it).
                    qsizetype unused = 0;
                    int after = 0;
                    const QList<Record> header = splitRecords(m_pending + '\n', m_line, &unused, &after);
                    m_pending.clear();
                    if (header.isEmpty()) return false;
                    *fields = header.first().fields;
                    *line = header.first().line;
                    return true;
                }
                if (!m_pending.isEmpty() && !m_pending.trimmed().isEmpty()) {
                    problem(m_tail ? QStringLiteral("%1: its last row truncated (no line end)").arg(m_name)
                                   : QStringLiteral("%1 line %2 truncated (no line end)").arg(m_name).arg(m_line));
                }
                m_pending.clear();
                return false;
            }
        }
        const auto [recordFields, recordLine] = m_ready.takeFirst();
        *fields = recordFields;
        *line = recordLine;
        return true;
    }
}

bool CsvStream::next(QList<QByteArray>* fields, int* line)
{
    if (m_header.isEmpty()) return false;
    const auto width = m_header.size();
    QList<QByteArray> record;
    int recordLine = 0;
    while (nextRecord(&record, &recordLine)) {
        if (record.size() == 1 && record.first().isEmpty()) continue;   // a blank line (a cut-short row's end)
        if (record.size() != width) {
            problem(m_tail ? QStringLiteral("%1: a row near its end truncated (%2 of %3 fields)").arg(m_name).arg(record.size()).arg(width)
                           : QStringLiteral("%1 line %2 truncated (%3 of %4 fields)").arg(m_name).arg(recordLine).arg(record.size()).arg(width));
            continue;
        }
        *fields = std::move(record);
        *line = m_tail ? 0 : recordLine;
        return true;
    }
    return false;
}

void CsvStream::seekTail(qint64 bytes)
{
    if (m_header.isEmpty() || m_ended) return;
    const qint64 start = m_file.size() - bytes;
    if (start <= m_file.pos() - m_pending.size()) return; // the whole rest is smaller than that
    // Rows are read from the first line break after START on; lines are then counted from there (0: unknown).
    m_ready.clear();
    m_pending.clear();
    m_file.seek(start);
    QByteArray skipped;
    while (!skipped.contains('\n')) {
        const QByteArray chunk = m_file.read(4096);
        if (chunk.isEmpty()) break;
        skipped += chunk;
    }
    m_pending = skipped.mid(skipped.indexOf('\n') + 1);
    m_line = 0;
    m_tail = true;
}

int CsvTable::column(const char* name) const
{
    return static_cast<int>(header.indexOf(QByteArray(name)));
}

int CsvStream::column(const char* name) const
{
    return static_cast<int>(m_header.indexOf(QByteArray(name)));
}

CsvTable readCsvTable(const QString& path, const QString& displayName)
{
    CsvTable table;
    CsvStream stream(path, displayName);
    table.exists = stream.exists();
    table.header = stream.header();
    QList<QByteArray> row;
    int line = 0;
    while (stream.next(&row, &line)) {
        table.rows.append(row);
        table.rowLines.append(line);
    }
    table.problems = stream.problems();
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

} // namespace ringmaster::runs
