#pragma once
// Shared helpers for the supervisor tests: jobs that run the real trainer, and process checks.

#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include "job_spec.h"

namespace ringmaster::supervisor::test {

// A 2-rank CPU job writing under root, using the trainer built with the tests.
JobSpec cpuJob(const QString& root, qint64 maxSteps, int epochs = 1);
QString trainerPath();
QString launchPath();
// True when no process with this pid exists (or it is a zombie nobody will run again).
bool processGone(qint64 pid);
// The pids the trainers logged ("pid N joined") in RUN_DIR/logs/rank-*.log.
QList<qint64> trainerPids(const QString& runDir);
int csvRows(const QString& path);
QStringList csvColumn(const QString& path, int column);
QString readAll(const QString& path);

} // namespace ringmaster::supervisor::test
