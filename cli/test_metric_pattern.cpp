#include "cli/test_metric_pattern.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QTextStream>

#include "supervisor/metric_line_parser.h"

namespace ringmaster::cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr const char* kMetricPatternFlag = "--metric-pattern";
constexpr const char* kJsonFlag = "--json";

QString shortest(double value)
{
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

QString describe(const supervisor::ScalarBatch& batch, bool json)
{
    if (json) {
        QJsonObject values;
        for (const auto& scalar : batch.values) values.insert(scalar.name, scalar.value);
        const QJsonObject line{{QStringLiteral("step"), batch.step}, {QStringLiteral("values"), values}};
        return QString::fromUtf8(QJsonDocument(line).toJson(QJsonDocument::Compact));
    }
    QStringList parts;
    for (const auto& scalar : batch.values) parts << scalar.name + QLatin1Char('=') + shortest(scalar.value);
    return QStringLiteral("step %1: %2").arg(batch.step).arg(parts.join(QLatin1Char(' ')));
}

} // namespace

bool isTestMetricPatternRequest(const QStringList& arguments)
{
    const auto end = arguments.indexOf(QStringLiteral("--")); // what follows "--" is the script's
    return arguments.mid(0, end < 0 ? arguments.size() : end).contains(QLatin1String(kTestMetricPatternFlag));
}

int runTestMetricPattern(const QStringList& arguments, QTextStream& in, QTextStream& out, QTextStream& err)
{
    QStringList patterns;
    bool json = false;
    for (int i = 0; i < arguments.size(); ++i) {
        const QString& argument = arguments.at(i);
        const QString patternPrefix = QLatin1String(kMetricPatternFlag) + QLatin1Char('=');
        if (argument == QLatin1String(kTestMetricPatternFlag)) continue;
        if (argument == QLatin1String(kJsonFlag)) {
            json = true;
        } else if (argument.startsWith(patternPrefix)) {
            patterns << argument.mid(patternPrefix.size());
        } else if (argument == QLatin1String(kMetricPatternFlag)) {
            if (i + 1 >= arguments.size()) {
                err << "ringmaster-launch: error: --metric-pattern needs a regular expression (or none)\n";
                err.flush();
                return kExitUsage;
            }
            patterns << arguments.at(++i);
        } else {
            err << "ringmaster-launch: error: --test-metric-pattern takes only --metric-pattern REGEX and --json, not '"
                << argument << "'; it reads the lines to test from stdin\n";
            err.flush();
            return kExitUsage;
        }
    }
    if (const QString problem = supervisor::MetricLineParser::checkPatterns(patterns); !problem.isEmpty()) {
        err << "ringmaster-launch: error: " << problem << '\n';
        err.flush();
        return kExitUsage;
    }
    supervisor::MetricLineParser parser(patterns);
    if (!parser.enabled()) err << "ringmaster-launch: metric parsing is off (--metric-pattern none): no line gives scalars\n";
    qint64 lines = 0;
    qint64 captured = 0;
    QString line;
    while (in.readLineInto(&line)) {
        ++lines;
        supervisor::ScalarBatch batch;
        if (!parser.parseLine(line, &batch)) continue;
        ++captured;
        out << describe(batch, json) << '\n';
        out.flush(); // a pipe from a running script shows each line as it comes
    }
    err << "ringmaster-launch: " << captured << " of " << lines << " lines gave scalars\n";
    err.flush();
    return kExitOk;
}

} // namespace ringmaster::cli
