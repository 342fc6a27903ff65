#pragma once
// Run directories made by hand for the runs-library tests, with the files a real run leaves (job.json and
// summary.json as the launcher and trainer write them, metrics.csv/eval.csv/scalars.csv with the
// recorders' exact headers, logs, classes, checkpoints, model.pt), so each test can damage one of them.

#include <QByteArray>
#include <QString>

namespace ringmaster::runs::test {

// A 2-rank CPU run of the built-in mlp: STEPS rows in metrics.csv (loss 1/step), an eval every 4 steps
// (accuracy 0.8, except 0.9 at step 8: the best is not the last), summary.json "completed", checkpoints and model.pt.
// withScalars adds the scalars.csv the supervisor would have recorded for the same metrics.
QString makeTrainerRun(const QString& root, const QString& name, int steps = 12, bool withScalars = false);
// A script run (launch.script set): scalars.csv with loss and val_accuracy, a launcher summary.json.
QString makeScriptRun(const QString& root, const QString& name);

void writeFile(const QString& path, const QByteArray& bytes);
QByteArray readFile(const QString& path);

} // namespace ringmaster::runs::test
