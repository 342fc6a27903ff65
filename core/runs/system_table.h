#pragma once
// A run's system metrics (RUN_DIR/system.csv, core/protocol/run_layout.h) as scalar records, the shape
// `ringmaster-runs export` and the app's export write: each (rank, name) is the series
// "system/rank<R>/<name>", its step the sample's number in that series (0, 1, ...: the samples are 2 s apart,
// not tied to training steps) and its wall time the sample's Unix time. A run without system.csv has none.
// Unreadable rows are left out and listed in `problems`.

#include <QString>

#include "runs/scalar_table.h"

namespace ringmaster::runs {

ScalarTable readRunSystem(const QString& dir);

} // namespace ringmaster::runs
