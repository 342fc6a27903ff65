#pragma once
// What /proc says about a live process, in one place for the supervisor: its scheduler state (a 'T'
// is stopped by SIGSTOP or a debugger, a 'Z' has exited and awaits its parent), its parent (to tell
// a rank's own children from strangers) and its peak resident memory (VmHWM, for the out-of-memory
// verdict). Every reader answers "unknown" for a process that is gone.

#include <QByteArray>
#include <QChar>
#include <QList>
#include <QString>
#include <QtGlobal>

namespace ringmaster::supervisor::proc {

// The fields of /proc/PID/stat after "(comm) " (the name may itself hold spaces and parentheses): field 0 is the
// state, 1 the parent, 11 and 12 utime and stime, 17 the threads, 21 the resident pages. Empty when the process is gone.
QList<QByteArray> statFields(qint64 pid);
// The state letter of /proc/PID/stat (R, S, D, T, Z, …); '?' when the process is gone.
QChar state(qint64 pid);
// The parent's pid; 0 when the process is gone.
qint64 parentPid(qint64 pid);
// True when `pid` is `ancestor` or one of its descendants (walks the parent chain).
bool isSelfOrDescendant(qint64 pid, qint64 ancestor);
// Peak resident set size (VmHWM) in KiB; -1 when the process is gone.
qint64 peakRssKiB(qint64 pid);
// The living processes (not zombies) whose environment holds exactly the entry NAME=VALUE: a run's processes
// carry its own RINGMASTER_SOCKET, which their children inherit even after they leave the run's process group
// (setsid). Only this user's processes can be read; the caller's own process is never listed.
QList<qint64> processesWithEnvironment(const QByteArray& nameEqualsValue);
// SIGKILL to PID if it still holds NAME=VALUE in its environment, through a pidfd taken before the second look, so
// a pid reused by another process in between is never signalled. True when signalled.
bool killIfStillHolds(qint64 pid, const QByteArray& nameEqualsValue);
// The program's name (/proc/PID/comm), for messages.
QString commandName(qint64 pid);

} // namespace ringmaster::supervisor::proc
