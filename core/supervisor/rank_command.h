#pragma once
// What the supervisor starts for each rank, and the few policies that differ between the built-in
// trainer and the user's own torchrun-style script. The supervisor's spawning, watching, bring-down
// and restarts are the same for both; only this differs:
//  - the program and arguments: ringmaster-trainer with the job file, or the interpreter with the
//    script and its arguments (never a shell);
//  - the environment: both get the torchrun variables, the socket variables and the GPUs; a script
//    also gets the rest of torchrun's contract (GROUP_RANK, ROLE_*, TORCHELASTIC_*), PYTHONUNBUFFERED
//    and RINGMASTER_RUN_DIR;
//  - progress: the trainer heartbeats over the socket; a script sends nothing, so any line it prints
//    counts (a line from any rank keeps the group alive), and its hang detection is off unless a
//    timeout was given;
//  - exit codes: the trainer's 2 (bad input, never restarted) and 3 (port taken, retried on a new
//    port) mean something; a script's do not. The trainer reports completion itself; a script has
//    completed when every rank exited 0.

#include <QJsonObject>
#include <QList>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include "supervisor/job_spec.h"
#include "supervisor/preflight.h"

namespace ringmaster::supervisor {

struct RankCommand
{
    QString program;
    QStringList arguments;
    QProcessEnvironment environment;
};

// What one launch of the group shares: where it runs and how its ranks reach the supervisor.
struct LaunchContext
{
    QString runDir;
    QString jobFile;          // the resolved job.json in the run directory
    int masterPort = 0;
    QString socketPath;
    QString token;
    int restartCount = 0;     // 0 on the first launch, +1 on each restart
    QString resumeFrom;       // the trainer's --resume target (empty: a fresh start); never for a script
};

struct LaunchPolicy
{
    bool heartbeatsOverSocket = true;   // the program sends heartbeat frames
    bool outputIsProgress = false;      // any line a rank prints resets its hang timer
    // The group is hung only when every rank is silent: a script usually prints on rank 0 alone, and
    // ranks that share collectives stall together, so rank 0's lines show that the others progress.
    bool groupWideProgress = false;
    double hangTimeoutSec = 0.0;        // a rank silent this long is hung; 0: never
    bool trainerExitCodes = true;       // exit 2 = bad input, exit 3 = rendezvous port taken
    bool completesOnCleanExit = false;  // every rank exiting 0 is completion (no status report expected)
    bool programWritesSummary = true;   // summary.json is the program's, completed by the supervisor
    QString silenceWord;                // how the hang reason names the silence: "stopped heartbeating"
};

LaunchPolicy launchPolicy(const JobSpec& job);

// The trainer's --resume target for this launch: on a restart (or a resume of a whole run directory) the
// run directory, so the trainer takes its newest intact checkpoint; else the job's checkpoint; empty for
// a fresh start, when there is no checkpoint yet, and always for a script (it resumes itself).
QString trainerResumeTarget(const JobSpec& job, int restartCount, const QString& runDir, const QString& latestCheckpoint);

// The program, arguments and environment of rank `rank`. `base` is the supervisor's own environment.
RankCommand commandFor(const JobSpec& job, const PreflightResult& checked, int rank, const LaunchContext& context,
                       const QProcessEnvironment& base = QProcessEnvironment::systemEnvironment());

// One line for the launcher's log: what each rank runs.
// The folder holding the Python helper module (ringmaster/__init__.py) that script ranks get on
// PYTHONPATH: $RINGMASTER_PYTHON_DIR, else PREFIX/share/ringmaster/python beside an installed launcher,
// else the source tree's python/; empty when none exists.
QString helperModuleDir();

QString describeCommand(const RankCommand& command);

// What RUN_DIR/commands.json records of one launch, so that a run can be reproduced or reported:
//   {"restart": N, "ranks": [{"rank": 0, "program": "...", "arguments": [...], "environment": {...}}, ...],
//    "hardware": {...}}
// "environment" holds only what Ringmaster set or changed for the rank (the torchrun contract, the GPUs,
// the socket); the socket's token is never written (its value reads "(secret)"). "hardware" is
// hardwareRecord's, left out when that is empty.
QJsonObject launchRecord(const QList<RankCommand>& commands, int restartCount,
                         const QProcessEnvironment& base = QProcessEnvironment::systemEnvironment(),
                         const QJsonObject& hardware = {});

// The GPUs the pre-flight saw and gave the ranks, as NVML named them, and the driver's version:
//   {"gpus": [{"rank": 0, "index": 2, "name": "NVIDIA H100 80GB HBM3"}, ...], "driver_version": "550.54.15"}
// (a name or the version is null where NVML did not say). Empty for a CPU launch: no GPU, nothing recorded.
QJsonObject hardwareRecord(const PreflightResult& checked);

} // namespace ringmaster::supervisor
