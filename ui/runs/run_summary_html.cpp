#include "ui/runs/run_summary_html.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QObject>

#include "runs/run_files.h"
#include "ui/runs/runs_model.h"

namespace ringmaster::ui {
namespace {

constexpr int kValueDigits = 6;

QJsonObject summaryOf(const QString& runDir)
{
    QFile file(QDir(runDir).filePath(QString::fromLatin1(runs::kSummaryFile)));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

QString summaryValue(const QJsonValue& value)
{
    if (value.isDouble()) return QString::number(value.toDouble(), 'g', kValueDigits);
    if (value.isString()) return value.toString();
    if (value.isBool()) return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    return QString::fromUtf8(QJsonDocument::fromVariant(value.toVariant()).toJson(QJsonDocument::Compact));
}

} // namespace

QString runSummaryHtml(const QList<runs::RunRecord>& records)
{
    QString html;
    for (const runs::RunRecord& run : records) {
        html += QStringLiteral("<p><b>%1</b><br><span style='color:#616161'>%2</span><br>")
                    .arg(RunsModel::labelOf(run).toHtmlEscaped(), QDir::toNativeSeparators(run.path).toHtmlEscaped());
        if (!run.notes.isEmpty()) html += QStringLiteral("<i>%1</i><br>").arg(run.notes.toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>")));
        html += QStringLiteral("</p>");
        if (records.size() == 1) {
            // The whole summary.json, as the trainer or launcher wrote it.
            const QJsonObject summary = summaryOf(run.path);
            html += QStringLiteral("<table cellspacing='0' cellpadding='1'>");
            for (auto it = summary.begin(); it != summary.end(); ++it) {
                html += QStringLiteral("<tr><td style='color:#616161; padding-right:8px'>%1</td><td>%2</td></tr>")
                            .arg(it.key().toHtmlEscaped(), summaryValue(it.value()).toHtmlEscaped());
            }
            html += QStringLiteral("</table>");
        }
        if (!run.problems.isEmpty()) {
            html += QStringLiteral("<p style='color:#b00020'>%1<br>• %2</p>")
                        .arg(QObject::tr("Not everything could be read:"),
                             run.problems.join(QStringLiteral("\n")).toHtmlEscaped().replace(QLatin1Char('\n'), QStringLiteral("<br>• ")));
        }
    }
    return html;
}

} // namespace ringmaster::ui
