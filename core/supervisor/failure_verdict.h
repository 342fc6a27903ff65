#pragma once
// Why a run failed. When one rank breaks, its peers fail too (a collective loses its partner), so
// every failing rank is weighed and the one that explains the others becomes the root cause: a hung
// rank over a signalled one, a signalled one over an odd exit code, that over a plain failure, and a
// rank that only saw "a peer rank died" last. How a rank ended is said in words a user can act on,
// e.g. "killed by SIGKILL, which Ringmaster did not send (another process or a user killed it)" or
// "killed by the out-of-memory killer (peak memory 812 MiB)". Raw stack frames stay in the rank's log
// and never reach the reason or the lines shown with it.

#include <QStringList>

#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

enum class FailurePriority { PeerCollateral = 0, ExitOne = 1, OtherExit = 2, Signalled = 3, Hung = 4 };

// How one rank ended, as far as the supervisor knows.
struct RankEnd
{
    int exitCode = 0;
    int exitSignal = 0;
    bool signalSentByRingmaster = false; // we sent exitSignal (stop, kill, failure bring-down)
    bool oomKilled = false;              // the kernel log names it as the OOM killer's victim
    bool oomLikely = false;              // its memory cgroup's OOM-kill count rose while it ran
    qint64 peakRssKiB = -1;
    bool trainerExitCodes = true;        // codes mean what ringmaster-trainer's do (2 bad input, 3 port taken); false: a script's
};

// "exited with code 1", "exited with code 2 (bad input)", "killed by signal 9 (SIGKILL) …". A script's code 2
// is Python's for a command-line error (argparse, a file it cannot open); its other codes are its own.
QString describeEnd(const RankEnd& end);
FailurePriority priorityOf(const RankEnd& end, const QStringList& lastLines);
// The last `count` lines worth showing: stack frames ("frame #3: …"), "terminate called …" and
// "Exception raised from …" lines are left out. Of a Python traceback only its header, its innermost
// frame and the exception line ("RuntimeError: boom") are kept, and that exception line is always
// among the lines returned, however much was printed after it.
QStringList reportableLines(const QStringList& lines, int count);

class FailureVerdict
{
public:
    void reset();
    // Offers one failure; it becomes the root cause when it outranks the current one.
    // Returns true when it did.
    bool consider(int rank, const QString& reason, FailurePriority priority, const RankEnd& end, const QStringList& lastLines);
    bool failed() const { return m_priority >= 0; }
    const RootCause& rootCause() const { return m_cause; }
    // For a failure that is not one rank's (rank 0's missing completion report).
    void setRootCause(const RootCause& cause);

private:
    RootCause m_cause;
    int m_priority = -1;
};

} // namespace ringmaster::supervisor
