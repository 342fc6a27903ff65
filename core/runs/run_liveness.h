#pragma once
// Whether a run is being run right now. A run started on this machine holds its directory's supervisor lock
// (protocol's run_lock.h) while its launcher or app runs it, so a listed run is
//   - "running" while someone holds the lock, unless its last start's final status is written (a resumed run
//     keeps its earlier segment's summary.json, older than the lock file, until it ends; the supervisor lets
//     go of the lock just after writing the final status);
//   - "interrupted" when the lock is free but its last start never wrote a final status: the launcher or app
//     was killed (SIGKILL, a crash, the machine going down), so summary.json is missing, has no status, or is
//     older than the lock file (an earlier segment's).
// Runs without a lock file (made before the lock existed, on Slurm, or by a trainer started by hand) keep the
// status their files give. Asked at every listing and never stored in an index: it changes with no file
// changing.

#include "runs/run_record.h"

namespace ringmaster::runs {

inline constexpr const char* kStatusRunning = "running";
inline constexpr const char* kStatusInterrupted = "interrupted";

// Sets record->status from the lock of the run directory record->path, as above.
void applyRunLiveness(RunRecord* record);

} // namespace ringmaster::runs
