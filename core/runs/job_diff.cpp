#include "runs/job_diff.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QSet>

#include <algorithm>

#include "runs/run_files.h"

namespace ringmaster::runs {
namespace {

QString textOf(const QJsonValue& value)
{
    switch (value.type()) {
    case QJsonValue::Double: return QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest);
    case QJsonValue::String: return value.toString();
    case QJsonValue::Bool: return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Array: return QString::fromUtf8(QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact));
    case QJsonValue::Object: return QString::fromUtf8(QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
    case QJsonValue::Undefined: break;
    }
    return {};
}

void flattenInto(const QJsonObject& object, const QString& prefix, FlatJob* out)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QString key = prefix.isEmpty() ? it.key() : prefix + QLatin1Char('.') + it.key();
        if (it.value().isObject() && !it.value().toObject().isEmpty()) flattenInto(it.value().toObject(), key, out);
        else out->insert(key, textOf(it.value()));
    }
}

} // namespace

std::optional<QString> JobDiff::value(int index, const QString& key) const
{
    if (index < 0 || index >= runs.size() || !runs[index].values) return std::nullopt;
    const auto it = runs[index].values->constFind(key);
    if (it == runs[index].values->constEnd()) return std::nullopt;
    return *it;
}

FlatJob flattenJob(const QJsonObject& job)
{
    FlatJob flat;
    flattenInto(job, QString(), &flat);
    return flat;
}

RunJob readRunJob(const QString& dir)
{
    RunJob job;
    job.run = dir;
    QFile file(QDir(dir).filePath(QString::fromLatin1(kJobFile)));
    if (!file.exists()) {
        job.problem = QStringLiteral("no job.json");
        return job;
    }
    if (!file.open(QIODevice::ReadOnly)) {
        job.problem = QStringLiteral("job.json cannot be read: %1").arg(file.errorString());
        return job;
    }
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        job.problem = QStringLiteral("job.json is not a JSON object (%1)")
                          .arg(error.error != QJsonParseError::NoError ? error.errorString() : QStringLiteral("another JSON value"));
        return job;
    }
    job.values = flattenJob(document.object());
    return job;
}

QStringList jobKeys(const QList<RunJob>& runs, bool onlyDifferences)
{
    QSet<QString> all;
    for (const RunJob& run : runs) {
        if (!run.values) continue;
        for (auto it = run.values->constBegin(); it != run.values->constEnd(); ++it) all.insert(it.key());
    }
    QStringList keys;
    for (const QString& key : all) {
        if (onlyDifferences) {
            std::optional<std::optional<QString>> first;   // the first run's value (nullopt inside: it lacks the key)
            bool differs = false;
            for (const RunJob& run : runs) {
                if (!run.values) continue;
                const auto it = run.values->constFind(key);
                const std::optional<QString> value = it == run.values->constEnd() ? std::nullopt : std::optional<QString>(*it);
                if (!first) first = value;
                else if (*first != value) differs = true;
            }
            if (!differs) continue;
        }
        keys << key;
    }
    std::sort(keys.begin(), keys.end());
    return keys;
}

JobDiff diffJobs(const QStringList& runDirs, bool onlyDifferences)
{
    JobDiff diff;
    for (const QString& dir : runDirs) diff.runs << readRunJob(dir);
    diff.keys = jobKeys(diff.runs, onlyDifferences);
    return diff;
}

} // namespace ringmaster::runs
