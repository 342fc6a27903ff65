#include "cli/runs_table.h"

#include <QStringList>

#include <algorithm>
#include <cmath>

namespace ringmaster::cli {
namespace {

constexpr const char* kMissing = "-";
constexpr int kLossDigits = 6;       // as the launcher's summary shows it
constexpr int kAccuracyDecimals = 4;
constexpr int kColumnGap = 2;

QString orMissing(const QString& text) { return text.isEmpty() ? QString::fromLatin1(kMissing) : text; }

} // namespace

QString formatDuration(double seconds)
{
    const auto total = static_cast<qint64>(std::llround(seconds));
    return QStringLiteral("%1:%2:%3").arg(total / 3600).arg(total / 60 % 60, 2, 10, QLatin1Char('0')).arg(total % 60, 2, 10, QLatin1Char('0'));
}

QString formatRunTable(const QList<runs::RunRecord>& runs)
{
    const QStringList header{QStringLiteral("NAME"), QStringLiteral("STARTED"), QStringLiteral("STATUS"), QStringLiteral("KIND"),
                             QStringLiteral("MODEL"), QStringLiteral("WORLD"), QStringLiteral("STEPS"), QStringLiteral("FINAL LOSS"),
                             QStringLiteral("BEST VAL ACC"), QStringLiteral("DURATION")};
    QList<QStringList> rows{header};
    for (const auto& run : runs) {
        rows.append({run.title.isEmpty() ? run.name : run.name + QStringLiteral(" (") + run.title + QLatin1Char(')'),
                     orMissing(run.started.isValid() ? run.started.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) : QString()),
                     run.status, run.kind, orMissing(run.model),
                     orMissing(run.worldSize ? QString::number(*run.worldSize) : QString()),
                     orMissing(run.steps ? QString::number(*run.steps) : QString()),
                     orMissing(run.finalLoss ? QString::number(*run.finalLoss, 'g', kLossDigits) : QString()),
                     orMissing(run.bestValAccuracy ? QString::number(*run.bestValAccuracy, 'f', kAccuracyDecimals) : QString()),
                     orMissing(run.durationSeconds ? formatDuration(*run.durationSeconds) : QString())});
    }
    QList<qsizetype> widths(header.size(), 0);
    for (const auto& row : rows) {
        for (int c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    const QString gap(kColumnGap, QLatin1Char(' '));
    QString text;
    for (int r = 0; r < rows.size(); ++r) {
        QString line;
        for (int c = 0; c < rows[r].size(); ++c) {
            if (c > 0) line += gap;
            line += rows[r][c].leftJustified(widths[c]);
        }
        text += line.trimmed() + QLatin1Char('\n');
        if (r == 0) continue;
        for (const QString& problem : runs[r - 1].problems) text += QStringLiteral("    ! ") + problem + QLatin1Char('\n');
    }
    return text;
}

} // namespace ringmaster::cli
