// Fuzz target: what a user's training script prints on rank 0 (core/supervisor/metric_line_parser.h). Feeds
// arbitrary bytes, split into lines at '\n' and read as UTF-8 as RankProcess hands them on, to a parser with
// the default rules and to one with user patterns (--metric-pattern, one with a step group), line after line.
// Must hold: a line gives at most kMaxScalarsPerLine scalars, each finite with a non-empty name, at a step
// that never goes negative; a line without scalars reports none; no crash, no undefined behaviour, no leak,
// and no line takes long (the rules are atomic, and a line is read up to kMaxScanChars).
#include <QByteArray>
#include <QString>
#include <QStringList>

#include <cmath>
#include <cstdint>

#include "fuzz_support.h"
#include "supervisor/metric_line_parser.h"

using namespace ringmaster::supervisor;

namespace {

void readLines(MetricLineParser& parser, const QList<QByteArray>& lines)
{
    for (const QByteArray& line : lines) {
        ScalarBatch scalars;
        scalars.step = -7; // must stay untouched when the line has no scalars
        const bool found = parser.parseLine(QString::fromUtf8(line), &scalars);
        FUZZ_CHECK(parser.currentStep() >= 0);
        if (!found) {
            FUZZ_CHECK(scalars.step == -7 && scalars.values.isEmpty());
            continue;
        }
        FUZZ_CHECK(!scalars.values.isEmpty() && scalars.values.size() <= kMaxScalarsPerLine);
        FUZZ_CHECK(scalars.step == parser.currentStep());
        for (const Scalar& scalar : scalars.values) {
            FUZZ_CHECK(std::isfinite(scalar.value));
            FUZZ_CHECK(!scalar.name.isEmpty());
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const QByteArray bytes(reinterpret_cast<const char*>(data), static_cast<qsizetype>(size));
    const QList<QByteArray> lines = bytes.split('\n');
    MetricLineParser defaults;
    readLines(defaults, lines);
    static const QStringList patterns{QStringLiteral("loss[ =:]+(?<loss>[-+0-9.eE]+)"),
                                      QStringLiteral("\\[(?<step>\\d+)/\\d+\\].*acc (?<acc>\\S+)")};
    FUZZ_CHECK(MetricLineParser::checkPatterns(patterns).isEmpty());
    MetricLineParser user(patterns);
    readLines(user, lines);
    return 0;
}
