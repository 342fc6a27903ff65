#pragma once
// RUN_DIR/system.csv (core/protocol/run_layout.h: wall_time,rank,name,value): the samples of system_sampler.h,
// appended as they come, each tick in one write (appending_file.h: all of it or nothing), so the file is whole
// up to the last tick even when the launcher is killed. A resumed or restarted run appends to the same file;
// the header is written once.

#include <QList>
#include <QString>

#include "supervisor/appending_file.h"
#include "supervisor/system_sampler.h"

namespace ringmaster::supervisor {

class SystemRecorder
{
public:
    // Opens (creating when needed) RUN_DIR/system.csv; false with error() set.
    bool open(const QString& runDir);
    bool isOpen() const { return m_file.isOpen(); }
    QString path() const { return m_file.path(); }
    QString error() const { return m_error; }
    // False with error() set when the write failed (a full disk): nothing of this tick is written then.
    bool append(const QList<SystemSample>& samples);

private:
    AppendingFile m_file;
    QString m_error;
};

} // namespace ringmaster::supervisor
