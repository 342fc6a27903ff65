#include "opened_run.h"

#include "system_table.h"

#include <QDir>
#include <QFileInfo>
#include <QFile>
#include <QRegularExpression>

#include "log_panel.h"
#include "run_files.h"
#include "run_index.h"

namespace ringmaster::ui {
namespace {

constexpr qint64 kLogTailBytes = 4 * 1024 * 1024;   // of each log file; the view keeps its last lines anyway

} // namespace

std::map<int, QStringList> readLogTails(const QString& runDir, int lineCount)
{
    static const QRegularExpression rankLog(QStringLiteral("^rank-(\\d+)\\.log$"));
    std::map<int, QStringList> logs;
    const QDir folder(QDir(runDir).filePath(QString::fromLatin1(runs::kLogsFolder)));
    for (const QString& name : folder.entryList({QStringLiteral("*.log")}, QDir::Files, QDir::Name)) {
        const auto match = rankLog.match(name);
        const int rank = match.hasMatch() ? match.captured(1).toInt() : name == QFileInfo(QLatin1String(runs::kLauncherLogFile)).fileName() ? -1 : -2;
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

OpenedRun readOpenedRun(const QString& runDir, const QString& label, bool withLogsAndEvals)
{
    OpenedRun run;
    run.label = label;
    run.job = runs::readRunJob(runDir);
    try {
        run.record = runs::loadRunRecord(runDir);   // what its files say now, problems included
    } catch (const runs::RunsError& e) {
        run.record.problems << e.message();
    }
    try {
        run.table = runs::readRunScalars(runDir, runs::kChartPointsPerSeries);
    } catch (const runs::RunsError& e) {
        run.table.problems << e.message();
    }
    if (withLogsAndEvals) {
        run.logLines = readLogTails(runDir, static_cast<int>(LogPanel::kLinesInMemory));   // all the view keeps
        run.evals = readRunEvals(runDir);
        try {
            run.system = runs::readRunSystem(runDir);
        } catch (const runs::RunsError& e) {
            run.system.problems << e.message();
        }
    }
    return run;
}

} // namespace ringmaster::ui
