#include "runs/run_record.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonValue>
#include <QRegularExpression>

#include <climits>
#include <cmath>

#include "runs/csv_table.h"
#include "runs/run_files.h"
#include "runs/run_notes.h"
#include "protocol/trainer_options.h"
#include "protocol/wire.h"

namespace ringmaster::runs {
namespace {

// The last values of a long CSV come from its last bytes: rows are at most a few hundred bytes.
constexpr qint64 kTailBytes = 64 * 1024;

// ringmaster-launch names run directories yyyyMMdd-HHmmss-NAME (local time).
const QRegularExpression& startStampPattern()
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d{8}-\\d{6})(?:-|$)"));
    return pattern;
}
constexpr const char* kStartStampFormat = "yyyyMMdd-HHmmss";

struct JsonFile
{
    bool exists = false;
    QJsonObject object;
};

JsonFile readJsonObject(const QDir& dir, const char* fileName, QStringList* problems)
{
    JsonFile result;
    QFile file(dir.filePath(QString::fromLatin1(fileName)));
    if (!file.exists()) return result;
    result.exists = true;
    if (!file.open(QIODevice::ReadOnly)) {
        *problems << QStringLiteral("%1 cannot be read: %2").arg(QString::fromLatin1(fileName), file.errorString());
        return result;
    }
    QJsonParseError error{};
    const QJsonDocument document = QJsonDocument::fromJson(file.readAll(), &error);
    if (error.error != QJsonParseError::NoError || !document.isObject()) {
        *problems << QStringLiteral("%1 is not valid JSON (%2)")
                         .arg(QString::fromLatin1(fileName),
                              error.error != QJsonParseError::NoError ? error.errorString() : QStringLiteral("not an object"));
        return result;
    }
    result.object = document.object();
    return result;
}

std::optional<double> finiteNumber(const QJsonValue& value)
{
    if (!value.isDouble() || !std::isfinite(value.toDouble())) return std::nullopt;
    return value.toDouble();
}

QJsonValue jsonOf(const std::optional<double>& value)
{
    return value && std::isfinite(*value) ? QJsonValue(*value) : QJsonValue(QJsonValue::Null);
}

QDateTime startOf(const QDir& dir, const QString& name)
{
    const auto match = startStampPattern().match(name);
    if (match.hasMatch()) {
        const QDateTime stamp = QDateTime::fromString(match.captured(1), QString::fromLatin1(kStartStampFormat));
        if (stamp.isValid()) return stamp;
    }
    // Not named by the launcher: the oldest of the run's files.
    QDateTime oldest;
    for (const QString& file : recordSourceFiles()) {
        const QFileInfo info(dir.filePath(file));
        if (!info.exists()) continue;
        const QDateTime time = info.birthTime().isValid() ? info.birthTime() : info.lastModified();
        if (!oldest.isValid() || time < oldest) oldest = time;
    }
    return oldest;
}

void readJob(const JsonFile& job, RunRecord* record)
{
    const QJsonObject launch = job.object.value(QStringLiteral("launch")).toObject();
    const QString script = launch.value(QStringLiteral("script")).toString();
    if (!script.isEmpty()) {
        record->kind = QString::fromLatin1(kKindScript);
        record->model = QFileInfo(script).completeBaseName();
    } else {
        const QJsonObject trainer = job.object.value(QStringLiteral("trainer")).toObject();
        const QString model = trainer.value(QStringLiteral("model")).toString(QString::fromLatin1(protocol::trainerOption("model").defaultValue));
        record->model = QFileInfo(model).completeBaseName();
    }
    const QJsonArray gpus = launch.value(QStringLiteral("gpus")).toArray();
    if (launch.value(QStringLiteral("device")).toString() == QLatin1String("cuda") && !gpus.isEmpty()) {
        record->worldSize = static_cast<int>(gpus.size());
    } else if (launch.value(QStringLiteral("nproc")).isDouble()) {
        record->worldSize = launch.value(QStringLiteral("nproc")).toInt();
    }
}

void readSummary(const JsonFile& summary, RunRecord* record)
{
    const QJsonObject& s = summary.object;
    if (s.value(QStringLiteral("status")).isString()) record->status = s.value(QStringLiteral("status")).toString();
    if (record->model.isEmpty() && s.value(QStringLiteral("model")).isString()) {
        record->model = QFileInfo(s.value(QStringLiteral("model")).toString()).completeBaseName();
    }
    if (s.value(QStringLiteral("world_size")).isDouble()) record->worldSize = s.value(QStringLiteral("world_size")).toInt();
    if (const auto steps = finiteNumber(s.value(QStringLiteral("steps")))) record->steps = static_cast<qint64>(*steps);
    record->finalLoss = finiteNumber(s.value(QStringLiteral("final_loss")));
    record->durationSeconds = finiteNumber(s.value(QStringLiteral("seconds")));
}

// Up to CsvStream::kMaxProblems unreadable rows are named; a file damaged throughout is not listed line by line.
void unreadableRow(QStringList* problems, int* count, const char* file, int line)
{
    if ((*count)++ < CsvStream::kMaxProblems) {
        *problems << (line > 0 ? QStringLiteral("%1 line %2 unreadable (not a number)").arg(QLatin1String(file)).arg(line)
                               : QStringLiteral("%1: a row near its end unreadable (not a number)").arg(QLatin1String(file)));
    }
}

// Steps and final loss from metrics.csv where summary.json did not give them, from its last rows only (a
// week-long run's file is gigabytes): the tail is enough for the last values. Unreadable rows are problems.
void readMetrics(CsvStream& metrics, RunRecord* record)
{
    const int stepColumn = metrics.column(protocol::kKeyStep);
    const int lossColumn = metrics.column(protocol::kKeyLoss);
    if (metrics.exists() && !metrics.header().isEmpty() && (stepColumn < 0 || lossColumn < 0)) {
        record->problems << QStringLiteral("metrics.csv has no step or loss column");
        return;
    }
    metrics.seekTail(kTailBytes);
    std::optional<qint64> lastStep;
    std::optional<double> lastLoss;
    QList<QByteArray> row;
    int line = 0;
    int unreadable = 0;
    while (metrics.next(&row, &line)) {
        const auto step = parseCsvInteger(row[stepColumn]);
        const auto loss = parseCsvNumber(row[lossColumn]);
        if (!step || !loss) {
            unreadableRow(&record->problems, &unreadable, kMetricsFile, line);
            continue;
        }
        lastStep = step;
        lastLoss = loss;
    }
    if (!record->steps && lastStep) record->steps = lastStep;
    if (!record->finalLoss && lastLoss && std::isfinite(*lastLoss)) record->finalLoss = lastLoss;
}

std::optional<double> bestValAccuracyIn(CsvStream& eval, QStringList* problems)
{
    const int column = eval.column(protocol::kKeyValAccuracy);
    if (eval.exists() && !eval.header().isEmpty() && column < 0) {
        *problems << QStringLiteral("eval.csv has no val_accuracy column");
        return std::nullopt;
    }
    std::optional<double> best;
    QList<QByteArray> row;
    int line = 0;
    int unreadable = 0;
    while (eval.next(&row, &line)) {
        const auto value = parseCsvNumber(row[column]);
        if (!value) {
            unreadableRow(problems, &unreadable, kEvalFile, line);
            continue;
        }
        if (std::isfinite(*value) && (!best || *value > *best)) best = value;
    }
    return best;
}

// What a script names its loss and validation accuracy, most specific first: the trainer's names, then the
// usual TensorBoard-style and underscore forms.
const char* const kLossNames[] = {protocol::kKeyLoss, "train/loss", "train_loss", "loss/train"};
const char* const kAccuracyNames[] = {protocol::kKeyValAccuracy, "val/accuracy", "val/acc", "val_acc", "accuracy/val"};

template <typename Text, std::size_t N>
int rankOf(const Text& name, const char* const (&names)[N])
{
    for (std::size_t i = 0; i < N; ++i) {
        if (name == names[i]) return static_cast<int>(i);
    }
    return -1;
}

// A script run's figures come from scalars.csv: its last step, last loss and best validation accuracy
// (under the first of the names above that it reports).
void readScalars(CsvStream& scalars, RunRecord* record)
{
    const int stepColumn = scalars.column(protocol::kKeyStep);
    const int nameColumn = scalars.column(column::kName);
    const int valueColumn = scalars.column(column::kValue);
    if (scalars.exists() && !scalars.header().isEmpty() && (stepColumn < 0 || nameColumn < 0 || valueColumn < 0)) {
        record->problems << QStringLiteral("scalars.csv has no step, name or value column");
        return;
    }
    // The best accuracy needs every row: streamed, one row in memory at a time.
    std::optional<qint64> lastStep;
    std::optional<double> lastLoss, bestAccuracy;
    int lossRank = INT_MAX, accuracyRank = INT_MAX; // the name the current figure comes from
    QList<QByteArray> row;
    int line = 0;
    int unreadable = 0;
    while (scalars.next(&row, &line)) {
        const auto step = parseCsvInteger(row[stepColumn]);
        const auto value = parseCsvNumber(row[valueColumn]);
        if (!step || !value) {
            unreadableRow(&record->problems, &unreadable, kScalarsFile, line);
            continue;
        }
        if (!lastStep || *step > *lastStep) lastStep = step;
        if (!std::isfinite(*value)) continue;
        if (const int rank = rankOf(row[nameColumn], kLossNames); rank >= 0 && rank <= lossRank) {
            lossRank = rank;
            lastLoss = value;
        }
        if (const int rank = rankOf(row[nameColumn], kAccuracyNames); rank >= 0 && rank <= accuracyRank) {
            if (rank < accuracyRank || !bestAccuracy || *value > *bestAccuracy) bestAccuracy = value;
            accuracyRank = rank;
        }
    }
    if (!record->steps) record->steps = lastStep;
    if (!record->finalLoss) record->finalLoss = lastLoss;
    if (!record->bestValAccuracy) record->bestValAccuracy = bestAccuracy;
}

} // namespace

QJsonObject RunRecord::toJson() const
{
    QJsonArray problemArray = QJsonArray::fromStringList(problems);
    return {
        {QStringLiteral("name"), name},
        {QStringLiteral("path"), path},
        {QStringLiteral("started"), started.isValid() ? QJsonValue(started.toOffsetFromUtc(started.offsetFromUtc()).toString(Qt::ISODate))
                                                      : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("status"), status},
        {QStringLiteral("kind"), kind},
        {QStringLiteral("model"), model.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(model)},
        {QStringLiteral("world_size"), worldSize ? QJsonValue(*worldSize) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("steps"), steps ? QJsonValue(*steps) : QJsonValue(QJsonValue::Null)},
        {QStringLiteral("final_loss"), jsonOf(finalLoss)},
        {QStringLiteral("best_val_accuracy"), jsonOf(bestValAccuracy)},
        {QStringLiteral("duration_seconds"), jsonOf(durationSeconds)},
        {QStringLiteral("title"), title.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(title)},
        {QStringLiteral("notes"), notes.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(notes)},
        {QStringLiteral("colour"), colour.isEmpty() ? QJsonValue(QJsonValue::Null) : QJsonValue(colour)},
        {QStringLiteral("problems"), problemArray},
    };
}

RunRecord RunRecord::fromJson(const QJsonObject& o)
{
    RunRecord record;
    record.name = o.value(QStringLiteral("name")).toString();
    record.path = o.value(QStringLiteral("path")).toString();
    if (o.value(QStringLiteral("started")).isString()) {
        record.started = QDateTime::fromString(o.value(QStringLiteral("started")).toString(), Qt::ISODate).toLocalTime();
    }
    record.status = o.value(QStringLiteral("status")).toString(QString::fromLatin1(kStatusUnknown));
    record.kind = o.value(QStringLiteral("kind")).toString(QString::fromLatin1(kKindTrainer));
    record.model = o.value(QStringLiteral("model")).toString();
    if (o.value(QStringLiteral("world_size")).isDouble()) record.worldSize = o.value(QStringLiteral("world_size")).toInt();
    if (o.value(QStringLiteral("steps")).isDouble()) record.steps = o.value(QStringLiteral("steps")).toInteger();
    record.finalLoss = finiteNumber(o.value(QStringLiteral("final_loss")));
    record.bestValAccuracy = finiteNumber(o.value(QStringLiteral("best_val_accuracy")));
    record.durationSeconds = finiteNumber(o.value(QStringLiteral("duration_seconds")));
    record.title = o.value(QStringLiteral("title")).toString();
    record.notes = o.value(QStringLiteral("notes")).toString();
    record.colour = o.value(QStringLiteral("colour")).toString();
    for (const auto& problem : o.value(QStringLiteral("problems")).toArray()) record.problems << problem.toString();
    return record;
}

RunRecord readRunRecord(const QString& dirPath)
{
    requireRunDirectory(dirPath);
    const QDir dir(dirPath);
    RunRecord record;
    record.path = dirPath;
    record.name = QFileInfo(QDir::cleanPath(dirPath)).fileName();
    record.started = startOf(dir, record.name);

    const JsonFile job = readJsonObject(dir, kJobFile, &record.problems);
    if (!job.exists) record.problems << QStringLiteral("job.json missing");
    readJob(job, &record);

    const JsonFile summary = readJsonObject(dir, kSummaryFile, &record.problems);
    if (!summary.exists) record.problems << QStringLiteral("summary.json missing (the run is still going, or ended without one)");
    readSummary(summary, &record);

    CsvStream metrics(dir.filePath(QString::fromLatin1(kMetricsFile)), QString::fromLatin1(kMetricsFile));
    readMetrics(metrics, &record);
    record.problems << metrics.problems();

    CsvStream eval(dir.filePath(QString::fromLatin1(kEvalFile)), QString::fromLatin1(kEvalFile));
    record.bestValAccuracy = bestValAccuracyIn(eval, &record.problems);
    record.problems << eval.problems();
    if (!record.bestValAccuracy) record.bestValAccuracy = finiteNumber(summary.object.value(QStringLiteral("val_accuracy")));

    // scalars.csv (every value, often the largest file) only for what the trainer's own files did not give.
    if (!record.steps || !record.finalLoss || !record.bestValAccuracy) {
        CsvStream scalars(dir.filePath(QString::fromLatin1(kScalarsFile)), QString::fromLatin1(kScalarsFile));
        readScalars(scalars, &record);
        record.problems << scalars.problems();
    }

    const RunNotes notes = readRunNotes(dirPath, &record.problems);
    record.title = notes.title;
    record.notes = notes.notes;
    record.colour = notes.colour;
    return record;
}

} // namespace ringmaster::runs
