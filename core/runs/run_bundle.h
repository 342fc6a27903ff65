#pragma once
// A run as one tar.gz to hand to a colleague or attach to a bug report: under a top folder named after
// the run, its job.json, summary.json, metrics.csv, eval.csv, scalars.csv, classes.json, commands.json,
// notes.json, logs/ and slurm/ where present, byte for byte, plus a generated environment.json (environment_info.h);
// checkpoints/ and model.pt only when asked, as they can be large. Written with libarchive into a
// QSaveFile, so the archive appears complete or not at all: a failure is a RunsError and leaves no file.

#include <QString>

#include "runs/run_files.h"   // kEnvironmentFile

namespace ringmaster::runs {

struct BundleOptions
{
    bool withCheckpoints = false;
    bool withModel = false;
};

struct BundleResult
{
    int files = 0;            // members written, environment.json included
    qint64 bytes = 0;         // the archive's size
};

// Writes the run directory RUN_DIR (which must be one) to OUT. Throws RunsError.
BundleResult writeRunBundle(const QString& runDir, const QString& out, const BundleOptions& options);

} // namespace ringmaster::runs
