#pragma once
// The hyperparameters of several runs side by side, without widgets: each run's job.json (the launcher's
// and the trainer's settings, as the job form or ringmaster-launch wrote them) flattened into dotted keys
// ("trainer.lr", "launch.nproc", ...; arrays stay whole, as compact JSON), and the keys whose values differ
// between the runs, or all of them. What the app's Runs tab shows when runs are compared, so that "what
// did I change?" has an answer without opening files. A run without a readable job.json has no values:
// it is shown as unknown ("—") and takes no part in deciding which keys differ.

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

#include <optional>

class QJsonObject;

namespace ringmaster::runs {

// Dotted key -> the value as text (numbers in their shortest exact form, strings as they are, true/false,
// null, arrays and empty objects as compact JSON).
using FlatJob = QMap<QString, QString>;

struct RunJob
{
    QString run;                  // the run directory
    std::optional<FlatJob> values; // none: no job.json, or not a JSON object (see problem)
    QString problem;              // why there are no values, in one line
};

struct JobDiff
{
    QList<RunJob> runs;           // in the order given
    QStringList keys;             // sorted: those that differ, or every key when all were asked for
    // The value of KEY in the run at INDEX; nullopt when the run has no job.json or not that key.
    std::optional<QString> value(int index, const QString& key) const;
};

FlatJob flattenJob(const QJsonObject& job);
// Reads DIR/job.json; never throws (a missing or invalid file is a RunJob without values).
RunJob readRunJob(const QString& dir);
// Keys whose values are not the same in every run that has values (a key some of them lack differs);
// with onlyDifferences false, every key any run has.
QStringList jobKeys(const QList<RunJob>& runs, bool onlyDifferences);
// readRunJob for each directory, then jobKeys.
JobDiff diffJobs(const QStringList& runDirs, bool onlyDifferences = true);

} // namespace ringmaster::runs
