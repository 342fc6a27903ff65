#pragma once
// RUN_DIR/scalars.csv: every scalar the supervisor receives (a script's printed values, the helper
// module's "scalars" frames, the built-in trainer's step and eval metrics), one row per value:
//   step,wall_time,name,value   (protocol::kScalarsColumns, core/protocol/run_layout.h)
// wall_time is Unix time in seconds (as TensorBoard's), taken when the value arrived; value has full
// round-trip precision. Rows are appended as they arrive, each batch in one write that is flushed at
// once, so the file is complete up to the last batch even if the GUI or the launcher is closed or
// killed. A resumed or restarted run keeps appending to the same file; the header is written once. A batch
// the disk cannot take whole is not written at all (appending_file.h): never half a row.

#include <QString>

#include "supervisor/appending_file.h"
#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

// The built-in trainer's metrics as scalars (loss, lr, samples_per_sec, epoch; val_loss, val_accuracy),
// without the values that are not finite (a regression model has no accuracy).
ScalarBatch scalarsOf(const StepMetric& metric);
ScalarBatch scalarsOf(const EvalMetric& metric);

class ScalarRecorder
{
public:
    // Opens (creating when needed) RUN_DIR/scalars.csv for appending; false with error() set.
    bool open(const QString& runDir);
    bool isOpen() const { return m_file.isOpen(); }
    QString path() const { return m_file.path(); }
    QString error() const { return m_error; }
    qint64 rowsWritten() const { return m_rowsWritten; }

    // Appends one row per value; false with error() set when the write failed (e.g. a full disk).
    bool append(const ScalarBatch& scalars, double wallTime);
    // The same, stamped with the current time.
    bool append(const ScalarBatch& scalars);

    // A CSV field: quoted (and its quotes doubled) when it holds a comma, a quote or a line break.

private:
    AppendingFile m_file;
    QString m_error;
    qint64 m_rowsWritten = 0;
};

} // namespace ringmaster::supervisor
