#pragma once
// Turns the lines a user's training script prints (rank 0's stdout and stderr) into scalars, so that a
// torchrun-style script that only prints its loss gets charts and scalars.csv without a change.
//
// Default rules (no --metric-pattern):
//   - `name: number` and `name=number` pairs are scalars (spaces around ':' or '=' allowed, the name
//     may be quoted as in a printed dict: `{'loss': 0.25}`). A name is a word of letters, digits and
//     '_', '/', '.', '-' that starts with a letter or '_' (`train/loss`, `val.acc`); it is kept as
//     printed (`Loss` stays `Loss`). A number is an integer or a decimal, with an optional exponent;
//     only finite values count (nan and inf are not scalars).
//   - A `step N` or `iter N` / `iteration N` word (any case, with or without ':' or '=', also
//     `Step [20/600]`) sets the step of the scalars on that line; `epoch N` is kept as the scalar
//     `epoch`. A line without a step uses the last step seen; until one is seen, the n-th line that
//     has scalars is step n.
//   - A word and its number without ':' or '=' (`loss 0.1234`, `rank 0`) is not a pair, by that rule.
//   - Not scalars: clock times and dates (`12:30:45`, `[2026-11-30 12:00:00.123]`), versions and
//     addresses (`1.13.1`, `127.0.0.1`), numbers glued to a unit or a fraction (`12.3s`, `45/100`),
//     tqdm's `name: 45%|` bar and terminal colour codes (stripped first). Of a line rewritten with
//     '\r' (a progress bar), only the last state is read.
// User patterns (--metric-pattern REGEX, repeatable) replace the default rules: every match of each
// pattern on a line contributes its named groups; the group `step` is the step, every other named
// group whose text is a finite number is a scalar of that name. `none` alone turns parsing off.

#include <QList>
#include <QRegularExpression>
#include <QString>
#include <QStringList>

#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

inline constexpr const char* kMetricPatternNone = "none";
inline constexpr int kMaxScalarsPerLine = 256;
inline constexpr int kMaxScanChars = 16 * 1024; // a longer line is read up to here

class MetricLineParser
{
public:
    // Checks --metric-pattern values up front; returns "" when they are usable, otherwise one line
    // naming the pattern and the problem (e.g. the offset of a regular-expression error).
    static QString checkPatterns(const QStringList& patterns);

    // `patterns` empty: the default rules; {"none"}: off. Patterns must have passed checkPatterns
    // (one that did not is ignored).
    explicit MetricLineParser(const QStringList& patterns = {});

    bool enabled() const { return m_enabled; }

    // Reads one line; returns true and fills `scalars` when the line holds at least one scalar.
    bool parseLine(const QString& line, ScalarBatch* scalars);

    // The step that a line without one gets (the last step seen, or the running count).
    qint64 currentStep() const { return m_lastStep; }

private:
    bool parseDefault(const QString& text, qint64* step, QList<Scalar>* values) const;
    bool parseWithPatterns(const QString& text, qint64* step, QList<Scalar>* values) const;

    bool m_enabled = true;
    QList<QRegularExpression> m_patterns; // empty: the default rules
    qint64 m_lastStep = 0;
    bool m_stepSeen = false;
};

} // namespace ringmaster::supervisor
