#include "runs/opened_run.h"

#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QRegularExpression>

#include "runs/run_files.h"
#include "runs/run_index.h"
#include "runs/system_table.h"

namespace ringmaster::runs {
namespace {

constexpr qint64 kLogTailBytes = 4 * 1024 * 1024;   // of each log file; the view keeps its last lines anyway

} // namespace

std::map<int, QStringList> readLogTails(const QString& runDir, int lineCount)
{
    static const QRegularExpression rankLog(QStringLiteral("^rank-(\\d+)\\.log$"));
    std::map<int, QStringList> logs;
    const QDir folder(QDir(runDir).filePath(QString::fromLatin1(kLogsFolder)));
    for (const QString& name : folder.entryList({QStringLiteral("*.log")}, QDir::Files, QDir::Name)) {
        const auto match = rankLog.match(name);
        const int rank = match.hasMatch() ? match.captured(1).toInt() : name == QFileInfo(QLatin1String(kLauncherLogFile)).fileName() ? -1 : -2;
        if (rank < -1) continue;
        QFile file(folder.filePath(name));
        if (!file.open(QIODevice::ReadOnly)) continue;
        if (file.size() > kLogTailBytes) file.seek(file.size() - kLogTailBytes);
        QStringList lines = QString::fromUtf8(file.readAll()).split(QLatin1Char('\n'));
        if (!lines.isEmpty() && lines.last().isEmpty()) lines.removeLast();
        if (lines.size() > lineCount) lines = lines.mid(lines.size() - lineCount);
        logs[rank] = lines;
    }
    return logs;
}

OpenedRun readOpenedRun(const QString& runDir, const QString& label, int logLines)
{
    OpenedRun run;
    run.label = label;
    run.job = readRunJob(runDir);
    try {
        run.record = loadRunRecord(runDir);   // what its files say now, problems included
    } catch (const RunsError& e) {
        run.record.problems << e.message();
    }
    try {
        run.table = readRunScalars(runDir, kChartPointsPerSeries);
    } catch (const RunsError& e) {
        run.table.problems << e.message();
    }
    if (logLines > 0) {
        run.logLines = readLogTails(runDir, logLines);
        run.evals = readRunEvals(runDir);
        try {
            run.system = readRunSystem(runDir);
        } catch (const RunsError& e) {
            run.system.problems << e.message();
        }
    }
    return run;
}

} // namespace ringmaster::runs
