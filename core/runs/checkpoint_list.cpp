#include "runs/checkpoint_list.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include <algorithm>

#include "runs/csv_table.h"
#include "runs/run_files.h"

namespace ringmaster::runs {

qint64 checkpointStepOfName(const QString& fileName)
{
    static const QRegularExpression pattern(QStringLiteral("^step-(\\d+)\\.pt$"));
    const auto match = pattern.match(fileName);
    if (!match.hasMatch()) return -1;
    bool ok = false;
    const qint64 step = match.captured(1).toLongLong(&ok);
    return ok ? step : -1;
}

namespace {

// The checkpoint best.json names (a file name in checkpoints/, nothing else), marked with its metric and value.
void markBest(const QDir& folder, QList<CheckpointInfo>& list)
{
    QFile file(folder.filePath(QLatin1String(protocol::kBestRecordFile)));
    if (file.size() > 64 * 1024 || !file.open(QIODevice::ReadOnly)) return;
    const QJsonObject record = QJsonDocument::fromJson(file.readAll()).object();
    const QString name = record.value(QStringLiteral("checkpoint")).toString();
    const QJsonValue value = record.value(QStringLiteral("value"));
    if (!value.isDouble()) return;
    for (CheckpointInfo& info : list) {
        if (QFileInfo(info.path).fileName() != name) continue;
        info.best = true;
        info.bestMetric = record.value(QStringLiteral("metric")).toString();
        info.bestValue = value.toDouble();
    }
}

} // namespace

QList<CheckpointInfo> listRunCheckpoints(const QString& runDir)
{
    QList<CheckpointInfo> list;
    const QDir folder(runDir + QLatin1Char('/') + QLatin1String(kCheckpointsFolder));
    for (const QFileInfo& file : folder.entryInfoList({QStringLiteral("step-*.pt")}, QDir::Files)) {
        const qint64 step = checkpointStepOfName(file.fileName());
        if (step < 0) continue;
        CheckpointInfo info;
        info.path = file.absoluteFilePath();
        info.step = step;
        info.fileTime = file.lastModified();
        info.bytes = file.size();
        list.append(info);
    }
    std::sort(list.begin(), list.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) { return a.step < b.step; });
    if (list.isEmpty()) return list;
    markBest(folder, list);

    const CsvTable metrics = readCsvTable(runDir + QLatin1Char('/') + QLatin1String(kMetricsFile), QLatin1String(kMetricsFile));
    const int stepColumn = metrics.column(column::kStep);
    const int epochColumn = metrics.column(column::kEpoch);
    const int lossColumn = metrics.column(column::kLoss);
    if (stepColumn < 0) return list;
    // The row with the largest step at or before each checkpoint's (rows are in step order, but a
    // damaged or resumed file is not trusted to be).
    for (CheckpointInfo& info : list) {
        qint64 best = -1;
        int bestRow = -1;
        for (int row = 0; row < metrics.rows.size(); ++row) {
            const auto step = parseCsvInteger(metrics.rows.at(row).value(stepColumn));
            if (step && *step <= info.step && *step >= best) {
                best = *step;
                bestRow = row;
            }
        }
        if (bestRow < 0) continue;
        const auto& fields = metrics.rows.at(bestRow);
        info.metricsStep = best;
        if (epochColumn >= 0) info.epoch = parseCsvInteger(fields.value(epochColumn));
        if (lossColumn >= 0) info.loss = parseCsvNumber(fields.value(lossColumn));
    }
    return list;
}

qint64 resumeStepOf(const QString& resumeTarget)
{
    const QFileInfo target(resumeTarget);
    if (target.isFile()) return checkpointStepOfName(target.fileName());
    const auto checkpoints = listRunCheckpoints(resumeTarget);
    return checkpoints.isEmpty() ? -1 : checkpoints.last().step;
}

} // namespace ringmaster::runs
