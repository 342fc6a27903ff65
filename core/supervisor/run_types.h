#pragma once
// Values the supervisor reports to its front ends (the CLI and the GUI).

#include <QList>
#include <QString>
#include <QStringList>
#include <QtGlobal>

namespace ringmaster::supervisor {

enum class RunState { Idle, Starting, Running, Stopping, Completed, Failed, Stopped };
QString runStateName(RunState state);
bool isFinal(RunState state);

enum class RankState { Pending, Starting, Running, Exited, Failed, Hung };
QString rankStateName(RankState state);

struct StepMetric
{
    qint64 step = 0;
    qint64 epoch = 0;
    double loss = 0.0;
    double lr = 0.0;
    double samplesPerSec = 0.0;
    double wallTime = 0.0;
};

struct EvalMetric
{
    qint64 epoch = 0;
    qint64 step = 0;
    double valLoss = 0.0;
    double valAccuracy = 0.0; // NaN when the model has no accuracy (regression)
};

// One named value (any scalar: a script's printed `acc: 0.91`, a helper module's log(), a trainer metric).
struct Scalar
{
    QString name;
    double value = 0.0;
};

// The scalars of one step, as they arrived together (one output line, one "scalars" frame).
struct ScalarBatch
{
    qint64 step = 0;
    QList<Scalar> values;
};

// One value of what a rank used at one moment (system_sampler.h names them; RUN_DIR/system.csv records them).
struct SystemSample
{
    double wallTime = 0.0; // Unix time, seconds
    int rank = 0;
    QString name;          // one of system_metric's names
    double value = 0.0;
};

// Where a rank's training steps went lately: the mean milliseconds of the steps it timed since its previous
// heartbeat (core/protocol/wire.h's "timing"; core/trainer/step_timing.h says what each part holds).
struct StepTiming
{
    qint64 steps = 0;          // 0: none timed (a script's rank, an evaluation, the first beat)
    double dataMs = 0.0;
    double computeMs = 0.0;    // forward and backward, without the waits on gradient buckets
    double syncMs = 0.0;       // waiting for the other ranks
    double optimizerMs = 0.0;
    bool valid() const { return steps > 0; }
};

struct RankStatus
{
    int rank = 0;
    int gpu = -1;             // -1 on CPU
    qint64 pid = 0;
    RankState state = RankState::Pending;
    qint64 step = 0;
    QString phase;
    qint64 msSinceHeartbeat = -1;
    int exitCode = 0;
    int exitSignal = 0;       // non-zero when killed by a signal
    qint64 peakRssKiB = -1;   // peak resident memory seen (VmHWM), -1 before the first sample
    StepTiming timing;        // from its latest heartbeat that had timed steps
    bool straggler = false;   // named a straggler (straggler_detector.h) and not back in line since
    bool slowest = false;     // computes longest per step lately (two ranks or more with timings)
};

// Why a run failed: the first rank that failed, how, and its last log lines.
struct RootCause
{
    int rank = -1;
    QString reason;           // e.g. "exited with code 1", "killed by signal 9 (SIGKILL)", "stopped heartbeating for 5 s"
    int exitCode = 0;         // the rank's exit code (2: bad input, which no restart can fix)
    int exitSignal = 0;       // the signal that killed it, if any
    QStringList lastLines;
    QString summary() const;
};

// "1:05" or "2:03:09" (an ETA, a run's length); "--:--" for an unknown or negative time.
QString formatDuration(double seconds);

} // namespace ringmaster::supervisor
