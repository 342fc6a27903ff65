#pragma once
// RUN_DIR/tb/system/events.out.tfevents.<seconds>.<host>.<pid> (core/protocol/run_layout.h): the system samples of
// system_sampler.h as TensorBoard scalars, so `tensorboard --logdir runs` shows them beside the training curves
// (as the run "<run>/tb/system"). The file is created at the first sample, named to sort after every event file
// already in the folder (a resumed run's earlier file), and written with core/protocol/tensorboard_records, the
// encoder the trainer's files use (checked against real TensorBoard by trainer.real_tensorboard); each tick is
// one append, all of it or nothing (appending_file.h). Values are float32, as TensorBoard stores them.

#include <QList>
#include <QString>

#include "supervisor/appending_file.h"
#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

class SystemTensorBoard
{
public:
    explicit SystemTensorBoard(QString runDir) : m_runDir(std::move(runDir)) {}
    // False with error() set when the folder or the file cannot be made or written (the run goes on).
    bool append(const QList<SystemSample>& samples);
    QString error() const { return m_error; }
    QString path() const { return m_file.path(); }

private:
    bool open(double wallTime);

    QString m_runDir;
    AppendingFile m_file;
    QString m_error;
};

} // namespace ringmaster::supervisor
