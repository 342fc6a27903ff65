#pragma once
// Shared helpers for the supervisor tests: jobs that run the real trainer, and process checks.

#include <QJsonObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include "supervisor/job_spec.h"

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
QJsonObject readJson(const QString& path);
// Living (not zombie) ringmaster-* processes (launcher, trainer) that are children of this test or
// whose command line holds `marker` (a test's temporary folder: a trainer's --out, a launcher's
// --output-root), so that a stray rank is found even after its launcher died and init adopted it.
QList<qint64> ringmasterProcesses(const QString& marker);
// Every file under `dir` whose name holds ".tmp" (a partial atomic write), relative to `dir`.
QStringList tempFilesUnder(const QString& dir);
// A variable of a live process's environment (/proc/PID/environ), or empty.
QString environmentOf(qint64 pid, const QString& name);
// The /dev/shm/ringmaster-* segment a live process maps (the shared-memory gradient path) with its
// device and inode ("/dev/shm/ringmaster-12-34 (device 00:19, inode 5)"), or empty.
QString sharedMemorySegmentOf(qint64 pid);
// The "step" column of a metrics.csv as numbers.
QList<qint64> csvSteps(const QString& path);
// Writes a file (optionally executable), making its folder; returns its path, or empty when it cannot be written.
QString writeFile(const QString& path, const QByteArray& content, bool executable = false);

// --notify-command with a recorder that appends each event to DIR/events.jsonl, and what it recorded.
QStringList notifyArguments(const QString& dir);
QList<QJsonObject> notifiedEvents(const QString& dir);

// ringmaster-launch as the user runs it, its stdout and stderr merged into `output`.
struct LaunchProcess
{
    QProcess process;
    QString output;

    // environment: NAME=VALUE pairs added; unset: names removed from this test's environment.
    void start(const QStringList& arguments, const QStringList& environment = {}, const QStringList& unset = {});
    void read() { output += QString::fromUtf8(process.readAll()); }
    bool waitForOutput(const QString& needle, int timeoutMs);
    // Waits until the launcher has exited; false on timeout.
    bool finish(int timeoutMs);
    // The run directory the launcher named ("run DIR: N rank(s)"), or empty.
    QString runDir() const;
};

} // namespace ringmaster::supervisor::test
