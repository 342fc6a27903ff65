#pragma once
// Every scalar of a run as one long table of records (run, step, wall_time, name, value), the shape
// `ringmaster-runs export` writes. From scalars.csv when the run has one (it holds a script's values and
// the built-in trainer's loss, lr, samples_per_sec, epoch, val_loss and val_accuracy); otherwise, for runs
// made before scalars.csv existed, from metrics.csv (loss, lr, samples_per_sec, epoch) and eval.csv
// (val_loss, val_accuracy), ordered by step. There wall_time is metrics.csv's (seconds since the run
// started; eval rows take the wall time of the training step they follow, when there is one), where
// scalars.csv's is Unix time. Unreadable rows are left out and listed in `problems`. A week-long run's files
// are read row by row (csv_table.h), never held whole.

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace ringmaster::runs {

struct ScalarRecord
{
    QString run;
    qint64 step = 0;
    std::optional<double> wallTime;
    QString name;
    double value = 0.0;
};

struct ScalarTable
{
    QList<ScalarRecord> records;
    QStringList problems;
};

// Reads the run directory DIR (which must be one: see requireRunDirectory), streaming its files. With
// maxPointsPerSeries > 0 (a chart's reading) each scalar keeps at most that many points, evenly thinned, its last
// one always kept, and a problem says so; 0 (exports) keeps every point.
ScalarTable readRunScalars(const QString& dir, int maxPointsPerSeries = 0);
// What a chart reads of a past run: enough for any screen, bounded for a week of steps.
inline constexpr int kChartPointsPerSeries = 200000;

} // namespace ringmaster::runs
