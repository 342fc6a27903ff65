#include "runs/run_files.h"

#include <QDir>
#include <QFileInfo>

#include "runs/run_notes.h"

namespace ringmaster::runs {

QStringList recordSourceFiles()
{
    return {QString::fromLatin1(kJobFile), QString::fromLatin1(kSummaryFile), QString::fromLatin1(kMetricsFile),
            QString::fromLatin1(kEvalFile), QString::fromLatin1(kScalarsFile), QString::fromLatin1(kNotesFile)};
}

bool isRunDirectory(const QString& dir)
{
    const QDir folder(dir);
    for (const char* marker : {kJobFile, kSummaryFile, kMetricsFile, kScalarsFile}) {
        if (QFileInfo(folder.filePath(QString::fromLatin1(marker))).isFile()) return true;
    }
    return false;
}

void requireRunDirectory(const QString& dir)
{
    const QFileInfo info(dir);
    if (!info.exists()) throw RunsError(QStringLiteral("%1: no such folder: give a run directory, e.g. runs/20261130-101500-cnn").arg(dir));
    if (!info.isDir()) throw RunsError(QStringLiteral("%1 is a file, not a run directory: give the run's folder").arg(dir));
    if (!isRunDirectory(dir)) {
        throw RunsError(QStringLiteral("%1 is not a run directory (it has no job.json, summary.json, metrics.csv or scalars.csv): "
                                       "give a folder that ringmaster-launch or the app created, e.g. runs/20261130-101500-cnn")
                            .arg(dir));
    }
}

} // namespace ringmaster::runs
