#include "supervisor/metric_line_parser.h"

#include <QRegularExpressionMatchIterator>

#include <cmath>

namespace ringmaster::supervisor {
namespace {

// A name starts where no name character precedes it, so `30` in `12:30:45` or `0m` after a colour
// code can never start one; digits, '/', '.', '-' may follow its first letter.
#define RM_NAME_BEFORE R"((?<![A-Za-z0-9_/.\-]))"
#define RM_NAME R"((?>[A-Za-z_][A-Za-z0-9_/.\-]*))"
// An integer or decimal with an optional exponent, taken whole (atomic: `12.3s` must not yield `12`).
#define RM_NUMBER R"((?>[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?))"
// What may not follow a value: more of a word, a clock or a fraction (`12:30`, `45/100`), more digits
// of a version, an address, a date or a thousands group (`1.13.1`, `2026-11-30`, `1,234`), tqdm's bar.
#define RM_VALUE_END R"((?![A-Za-z0-9_/:]|[.,\-]\d|%\|))"

const QRegularExpression& pairRule()
{
    static const QRegularExpression rule(QStringLiteral(RM_NAME_BEFORE R"((['"]?)()" RM_NAME R"()\1\s*[:=]\s*()" RM_NUMBER
                                                                      ")" RM_VALUE_END));
    return rule;
}

// `step 20`, `Step: 20`, `iter=20`, `Step [20/600]`, `"step": 20`; the total after '/' is skipped.
QRegularExpression countWordRule(const char* words)
{
    return QRegularExpression(QStringLiteral(RM_NAME_BEFORE R"((['"]?)(?:)") + QLatin1String(words) +
                                  QStringLiteral(R"()\1\s*[:=]?\s*\[?\s*((?>\d+))(?:\s*/\s*\d+)?\s*\]?(?![A-Za-z0-9_]|[.,\-]\d))"),
                              QRegularExpression::CaseInsensitiveOption);
}

const QRegularExpression& stepRule()
{
    static const QRegularExpression rule = countWordRule("step|iteration|iter");
    return rule;
}

const QRegularExpression& epochRule()
{
    static const QRegularExpression rule = countWordRule("epoch");
    return rule;
}

#undef RM_NAME_BEFORE
#undef RM_NAME
#undef RM_NUMBER
#undef RM_VALUE_END

const QRegularExpression& colourCodes()
{
    static const QRegularExpression codes(QStringLiteral("\x1b\\[[0-9;?]*[ -/]*[@-~]"));
    return codes;
}

// What a terminal would show of the line: its last '\r' state, without colour codes, bounded.
QString visibleText(const QString& line)
{
    QString text = line.left(kMaxScanChars);
    if (text.contains(QLatin1Char('\r'))) {
        const auto states = text.split(QLatin1Char('\r'), Qt::SkipEmptyParts);
        text = states.isEmpty() ? QString() : states.last();
    }
    if (text.contains(QLatin1Char('\x1b'))) text.remove(colourCodes());
    return text;
}

// Adds or replaces (the last value of a name on a line wins; the order is that of first sight).
void addScalar(QList<Scalar>* values, const QString& name, double value)
{
    for (auto& existing : *values) {
        if (existing.name == name) {
            existing.value = value;
            return;
        }
    }
    if (values->size() < kMaxScalarsPerLine) values->append({name, value});
}

bool finiteNumber(const QString& text, double* value)
{
    bool ok = false;
    const double parsed = text.trimmed().toDouble(&ok);
    if (!ok || !std::isfinite(parsed)) return false;
    *value = parsed;
    return true;
}

bool stepNumber(const QString& text, qint64* step)
{
    bool ok = false;
    const qint64 parsed = text.trimmed().toLongLong(&ok);
    if (!ok || parsed < 0) return false;
    *step = parsed;
    return true;
}

} // namespace

QString MetricLineParser::checkPatterns(const QStringList& patterns)
{
    if (patterns.contains(QLatin1String(kMetricPatternNone)) && patterns.size() > 1) {
        return QStringLiteral("--metric-pattern none turns metric parsing off and cannot be combined with other patterns; "
                              "give either none or your patterns");
    }
    for (const QString& pattern : patterns) {
        if (pattern == QLatin1String(kMetricPatternNone)) continue;
        const QRegularExpression expression(pattern);
        if (!expression.isValid()) {
            return QStringLiteral("--metric-pattern '%1' is not a valid regular expression: %2 at offset %3")
                .arg(pattern, expression.errorString())
                .arg(expression.patternErrorOffset());
        }
        bool named = false;
        for (const QString& group : expression.namedCaptureGroups()) named = named || !group.isEmpty();
        if (!named) {
            return QStringLiteral("--metric-pattern '%1' has no named group: name what to capture, e.g. "
                                  "'loss (?<loss>[0-9.eE+-]+)' or 'it (?<step>\\d+)'")
                .arg(pattern);
        }
    }
    return QString();
}

MetricLineParser::MetricLineParser(const QStringList& patterns)
{
    if (patterns.contains(QLatin1String(kMetricPatternNone))) {
        m_enabled = false;
        return;
    }
    for (const QString& pattern : patterns) {
        QRegularExpression expression(pattern);
        if (expression.isValid()) m_patterns.append(expression);
    }
    m_enabled = patterns.isEmpty() || !m_patterns.isEmpty();
}

bool MetricLineParser::parseLine(const QString& line, ScalarBatch* scalars)
{
    if (!m_enabled) return false;
    const QString text = visibleText(line);
    if (text.trimmed().isEmpty()) return false;
    qint64 step = -1;
    QList<Scalar> values;
    const bool stepFound = m_patterns.isEmpty() ? parseDefault(text, &step, &values) : parseWithPatterns(text, &step, &values);
    if (stepFound) {
        m_lastStep = step;
        m_stepSeen = true;
    }
    if (values.isEmpty()) return false;
    if (!m_stepSeen) ++m_lastStep; // the running count of lines with scalars
    scalars->step = m_lastStep;
    scalars->values = values;
    return true;
}

bool MetricLineParser::parseDefault(const QString& text, qint64* step, QList<Scalar>* values) const
{
    // Step and epoch words first; their text is blanked so that `step: 20` is not also a pair.
    QString rest = text;
    bool stepFound = false;
    const auto stepMatch = stepRule().match(rest);
    if (stepMatch.hasMatch() && stepNumber(stepMatch.captured(2), step)) {
        stepFound = true;
        rest.replace(stepMatch.capturedStart(), stepMatch.capturedLength(), QString(stepMatch.capturedLength(), QLatin1Char(' ')));
    }
    const auto epochMatch = epochRule().match(rest);
    double epoch = 0.0;
    if (epochMatch.hasMatch() && finiteNumber(epochMatch.captured(2), &epoch)) {
        addScalar(values, QStringLiteral("epoch"), epoch);
        rest.replace(epochMatch.capturedStart(), epochMatch.capturedLength(), QString(epochMatch.capturedLength(), QLatin1Char(' ')));
    }
    auto pairs = pairRule().globalMatch(rest);
    while (pairs.hasNext()) {
        const auto pair = pairs.next();
        double value = 0.0;
        if (finiteNumber(pair.captured(3), &value)) addScalar(values, pair.captured(2), value);
    }
    return stepFound;
}

bool MetricLineParser::parseWithPatterns(const QString& text, qint64* step, QList<Scalar>* values) const
{
    bool stepFound = false;
    for (const QRegularExpression& pattern : m_patterns) {
        const QStringList groups = pattern.namedCaptureGroups();
        auto matches = pattern.globalMatch(text);
        while (matches.hasNext()) {
            const auto match = matches.next();
            for (int group = 1; group < groups.size(); ++group) {
                const QString& name = groups.at(group);
                if (name.isEmpty() || match.capturedStart(group) < 0) continue;
                const QString captured = match.captured(group);
                double value = 0.0;
                if (name == QLatin1String("step")) {
                    if (!stepFound && stepNumber(captured, step)) stepFound = true;
                } else if (finiteNumber(captured, &value)) {
                    addScalar(values, name, value);
                }
            }
        }
    }
    return stepFound;
}

} // namespace ringmaster::supervisor
