#include "runs/scalar_export.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QSaveFile>

#include <cmath>

#include "protocol/run_layout.h"
#include "runs/csv_table.h"
#include "runs/run_files.h"

namespace ringmaster::runs {
namespace {

QByteArray jsonString(const QString& text)
{
    // QJsonDocument escapes exactly as JSON requires; the brackets of the one-element array are cut off.
    const QByteArray array = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return array.mid(1, array.size() - 2);
}

QByteArray jsonNumber(const std::optional<double>& value)
{
    if (!value || !std::isfinite(*value)) return QByteArrayLiteral("null");
    return roundTripNumber(*value).toLatin1();
}

} // namespace

QString roundTripNumber(double value)
{
    if (std::isnan(value)) return QStringLiteral("nan");
    if (std::isinf(value)) return value > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

QByteArray scalarsAsCsv(const QList<ScalarRecord>& records)
{
    QByteArray out = QByteArray(kExportCsvHeader) + '\n';
    QHash<QString, QByteArray> fields;   // run and scalar names repeat: quote each once
    const auto field = [&fields](const QString& text) -> const QByteArray& {
        auto it = fields.find(text);
        if (it == fields.end()) it = fields.insert(text, QByteArray::fromStdString(protocol::csvField(text.toStdString())));
        return *it;
    };
    for (const ScalarRecord& r : records) {
        out += field(r.run);
        out += ',';
        out += QByteArray::number(r.step);
        out += ',';
        if (r.wallTime) out += roundTripNumber(*r.wallTime).toLatin1();
        out += ',';
        out += field(r.name);
        out += ',';
        out += roundTripNumber(r.value).toLatin1();
        out += '\n';
    }
    return out;
}

QByteArray scalarsAsJson(const QList<ScalarRecord>& records)
{
    QByteArray out = "[";
    QHash<QString, QByteArray> strings;
    const auto string = [&strings](const QString& text) -> const QByteArray& {
        auto it = strings.find(text);
        if (it == strings.end()) it = strings.insert(text, jsonString(text));
        return *it;
    };
    bool first = true;
    for (const ScalarRecord& r : records) {
        out += first ? "\n  {\"run\": " : ",\n  {\"run\": ";
        first = false;
        out += string(r.run);
        out += ", \"step\": ";
        out += QByteArray::number(r.step);
        out += ", \"wall_time\": ";
        out += jsonNumber(r.wallTime);
        out += ", \"name\": ";
        out += string(r.name);
        out += ", \"value\": ";
        out += jsonNumber(r.value);
        out += '}';
    }
    out += records.isEmpty() ? "]\n" : "\n]\n";
    return out;
}

void writeScalars(const QList<ScalarRecord>& records, const QString& path, ExportFormat format)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        throw RunsError(QStringLiteral("--out %1: cannot write it (%2): choose a writable file").arg(path, file.errorString()));
    }
    const QByteArray bytes = format == ExportFormat::Csv ? scalarsAsCsv(records) : scalarsAsJson(records);
    if (file.write(bytes) != bytes.size() || !file.commit()) {
        throw RunsError(QStringLiteral("--out %1: writing failed (%2): check free space and permissions").arg(path, file.errorString()));
    }
}

} // namespace ringmaster::runs
