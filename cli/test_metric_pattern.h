#pragma once
// ringmaster-launch --test-metric-pattern: try the metric rules on lines without starting a run.
// Reads lines from stdin (e.g. `python3 train.py | ringmaster-launch --test-metric-pattern`, or a saved
// log), and prints, for each line that yields scalars, what a run would record:
//   step 20: loss=0.1234 lr=0.01
// or with --json one object per line: {"step":20,"values":{"loss":0.1234,"lr":0.01}}.
// Takes the same --metric-pattern REGEX flags as a launch (repeatable, or none); without them the
// default rules apply (core/supervisor/metric_line_parser.h). An invalid pattern or an unknown flag:
// one line on stderr, exit 2.

#include <QStringList>

class QTextStream;

namespace ringmaster::cli {

inline constexpr const char* kTestMetricPatternFlag = "--test-metric-pattern";

// True when `arguments` (without the program name) ask for this mode (before any "--").
bool isTestMetricPatternRequest(const QStringList& arguments);

// Runs the mode on `arguments` (without the program name) until `in` ends; returns the exit code.
int runTestMetricPattern(const QStringList& arguments, QTextStream& in, QTextStream& out, QTextStream& err);

} // namespace ringmaster::cli
