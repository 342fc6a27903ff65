#pragma once
// What one frame of the reporting socket (core/protocol/wire.h) says, read from its decoded JSON object with
// every value checked: the pure half of MetricServer, which keeps the sockets, the token and each connection's
// hello state. Bytes in, typed values out, no I/O, so it is tested and fuzzed without a socket
// (tests/fuzz/fuzz_frames.cpp feeds FrameDecoder and this arbitrary bytes).
// A value meant as an integer (version, rank, pid, steps, epochs) counts only when it is a whole number that a
// qint64 holds (a rank also an int); anything else reads as absent: a version of 1e300 is no version and a
// rank of 1.5 no rank, never what a float-to-integer conversion (undefined past the type's range) makes of it.
// A "scalars" frame's values are checked one by one (finite, a bounded name without control characters, at
// most protocol::kMaxScalarsPerFrame); what breaks a rule is dropped and counted, the rest is kept.

#include <QJsonObject>
#include <QList>
#include <QPair>
#include <QString>

#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

struct ReportFrame
{
    enum class Kind { Hello, Step, Eval, Checkpoint, Status, Heartbeat, Scalars, Other };

    qint64 version = -1;         // "v"; -1 when absent or not a whole number
    QString type;                // "type" as sent ("" when absent or not a string)
    Kind kind = Kind::Other;
    // hello
    int rank = -1;               // -1 when absent, negative or not a whole number
    qint64 pid = 0;              // 0 when absent or not a whole number
    QString token;
    QString host;                // the rank's node; "" when absent or not a plain node name (isPlainNodeName)
    // step / eval / checkpoint / status / heartbeat (absent integers read as 0, absent losses as NaN)
    StepMetric step;
    EvalMetric eval;
    qint64 checkpointStep = 0;
    QString checkpointPath;
    QString status;
    qint64 heartbeatStep = 0;
    QString phase;
    StepTiming timing;           // steps 0 when absent or when any of its values is not a finite non-negative number
    // heartbeat "usage": (name, value) for each of system_metric::kProcessMetrics present as a finite number >= 0
    // (CPU at most 100 per thread claimed, or per 4096 threads); other names and values are dropped.
    QList<QPair<QString, double>> usage;
    // scalars: the values kept, how many were dropped and the first reason (empty when none was dropped)
    ScalarBatch scalars;
    qint64 droppedScalars = 0;
    QString scalarsProblem;
};

ReportFrame readReportFrame(const QJsonObject& frame);

// A node name that may become a command's argument (srun --nodelist=NAME): letters, digits, '.', '_' and '-',
// not starting with '-' or '.', at most 253 characters. A hello's "host" counts only when it is one.
bool isPlainNodeName(const QString& name);

} // namespace ringmaster::supervisor
