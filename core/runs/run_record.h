#pragma once
// One run at a glance: the fields `ringmaster-runs list` shows (name, start time, status, kind, model,
// world size, steps, final loss, best validation accuracy, duration), read from the run directory's
// job.json, summary.json, metrics.csv, eval.csv and scalars.csv, with the user's title, notes and colour from
// notes.json (run_notes.h). Runs of the built-in trainer and of
// users' scripts are both read. A damaged run (no job.json, a missing or invalid summary.json, a cut-short
// CSV row) is read with what is readable, and `problems` says in words what is not.

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

namespace ringmaster::runs {

inline constexpr const char* kKindTrainer = "trainer";
inline constexpr const char* kKindScript = "script";
inline constexpr const char* kStatusUnknown = "unknown";

struct RunRecord
{
    QString path;                 // the run directory as given (absolute when listed)
    QString name;                 // the run directory's name
    QDateTime started;            // invalid when nothing tells
    QString status = QString::fromLatin1(kStatusUnknown);   // summary.json's: completed, failed, stopped
    QString kind = QString::fromLatin1(kKindTrainer);       // trainer or script
    QString model;                // the trainer's model, or the script's name
    std::optional<int> worldSize;
    std::optional<qint64> steps;
    std::optional<double> finalLoss;
    std::optional<double> bestValAccuracy;
    std::optional<double> durationSeconds;
    QString title;                // the user's label for the run (notes.json), empty when none
    QString notes;                // the user's notes on the run (notes.json)
    QString colour;               // the user's colour for the run, "#rrggbb" (notes.json), empty when none
    QStringList problems;

    // The record as `list --json` prints it (missing values are null; started is ISO 8601 with offset).
    QJsonObject toJson() const;
    static RunRecord fromJson(const QJsonObject& object);
};

// Reads the run directory DIR (which must be one: see requireRunDirectory) from its files, no index.
RunRecord readRunRecord(const QString& dir);

} // namespace ringmaster::runs
