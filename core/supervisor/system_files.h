#pragma once
// A run's record of what its ranks used, written together: RUN_DIR/system.csv (system_recorder.h) and
// RUN_DIR/tb/system for TensorBoard (system_tensorboard.h). The local backend feeds it its sampler's ticks
// (system_sampler.h); the Slurm backend what each rank's heartbeat says of its own process (core/protocol/wire.h
// "usage"), since the /proc of another node is out of its reach. A write that fails is reported through the
// run directory (a problem said once) and the run goes on.

#include <QList>

#include <memory>

#include "supervisor/run_directory.h"
#include "supervisor/run_types.h"
#include "supervisor/system_recorder.h"
#include "supervisor/system_tensorboard.h"

namespace ringmaster::supervisor {

class SystemFiles
{
public:
    // After dir.prepare(): opens system.csv there (a failure is reported and the CSV skipped).
    explicit SystemFiles(RunDirectory& dir);
    void append(const QList<SystemSample>& samples);

private:
    RunDirectory& m_dir;
    SystemRecorder m_csv;
    SystemTensorBoard m_tensorboard;
};

} // namespace ringmaster::supervisor
