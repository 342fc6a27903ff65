#pragma once
// What /proc says about a live process, in one place for the supervisor: its scheduler state (a 'T'
// is stopped by SIGSTOP or a debugger, a 'Z' has exited and awaits its parent), its parent (to tell
// a rank's own children from strangers) and its peak resident memory (VmHWM, for the out-of-memory
// verdict). Every reader answers "unknown" for a process that is gone.

#include <QChar>
#include <QtGlobal>

namespace ringmaster::supervisor::proc {

// The state letter of /proc/PID/stat (R, S, D, T, Z, …); '?' when the process is gone.
QChar state(qint64 pid);
// The parent's pid; 0 when the process is gone.
qint64 parentPid(qint64 pid);
// True when `pid` is `ancestor` or one of its descendants (walks the parent chain).
bool isSelfOrDescendant(qint64 pid, qint64 ancestor);
// Peak resident set size (VmHWM) in KiB; -1 when the process is gone.
qint64 peakRssKiB(qint64 pid);

} // namespace ringmaster::supervisor::proc
