#pragma once
// The checkpoints of a run directory, for picking one to resume from or to copy out: the files the
// trainer writes as RUN_DIR/checkpoints/step-NNNNNNNN.pt (core/trainer/checkpoint.h; an abandoned
// timeline's, under checkpoints/abandoned-*/, are not listed: --resume RUN_DIR never picks them either),
// oldest first, each with its step (from the name), its file time and size, and the epoch and loss of
// metrics.csv's row at that step (the nearest row at or before it, when that step's row is missing).
// Reads only names, file times and metrics.csv: Qt Core, no LibTorch (the header inside the .pt is
// LibTorch's zip, read by the trainer when it resumes).

#include <QDateTime>
#include <QList>
#include <QString>

#include <optional>

namespace ringmaster::runs {

struct CheckpointInfo
{
    QString path;                   // absolute
    qint64 step = 0;
    QDateTime fileTime;             // last modified, local time
    qint64 bytes = 0;
    std::optional<qint64> epoch;    // metrics.csv's, at the step (or the nearest step before it)
    std::optional<double> loss;     // likewise
    std::optional<qint64> metricsStep; // the metrics.csv row they came from
    // The best checkpoint by the run's --keep-best rule (checkpoints/best.json names it): its metric and value.
    bool best = false;
    QString bestMetric;
    double bestValue = 0.0;
};

// The step in a checkpoint's file name (step-00000120.pt -> 120), or -1 for any other name.
qint64 checkpointStepOfName(const QString& fileName);

// RUN_DIR's checkpoints, by step; empty when it has none (or no checkpoints/ folder).
QList<CheckpointInfo> listRunCheckpoints(const QString& runDir);
// The step RESUME_TARGET (a checkpoint file, or a run directory: its newest checkpoint) resumes from, or -1 when
// unknown: what a resume's charts are replayed up to.
qint64 resumeStepOf(const QString& resumeTarget);

} // namespace ringmaster::runs
