#pragma once
// Every thread's stack of each rank of a hung group, taken before the group is killed, so that "hung" comes
// with where each rank was waiting (issue 26). One `gdb -batch -nx -p PID -ex "thread apply all bt"` per rank,
// all at once, never through a shell, each bounded by a timeout, written to RUN_DIR/logs/rank-N.stacks.txt.
// gdb attaches to a stopped process (SIGSTOP) as well as to one blocked in a collective, and detaches leaving it
// as it was; its frames name the trainer's functions and lines (the build keeps line tables) and, for a script's
// rank, the interpreter's C frames. Without gdb, or when it cannot attach (another debugger holds the process,
// ptrace is restricted), the file and the summary say so, and the group is killed all the same.

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

namespace ringmaster::supervisor {

class StackDumps : public QObject
{
    Q_OBJECT

public:
    static constexpr int kTimeoutMs = 30000; // gdb takes about 3 s per trainer rank on a busy 2-core machine

    struct Target
    {
        int rank = 0;
        qint64 pid = 0;
        QString path; // where the stacks go
    };

    explicit StackDumps(QObject* parent = nullptr);
    ~StackDumps() override; // a gdb still running is killed (its target is left as it was)

    // gdb's path, or empty when it is not installed.
    static QString debugger();

    // One dump per target, at once; finished() follows when every one has ended or timed out (at once when
    // there is no target or no gdb). Call once.
    void start(const QList<Target>& targets, int timeoutMs = kTimeoutMs);

Q_SIGNALS:
    // One line per target, in rank order: "rank 1: 9 thread(s)' stacks in PATH", with "(gdb took longer than …)"
    // when it was stopped part way, or "rank 1: no stacks (REASON)".
    void finished(const QStringList& summary);

private:
    void done(int index, int threads, const QString& failure);

    QList<Target> m_targets;
    QStringList m_summary;
    int m_pending = 0;
};

} // namespace ringmaster::supervisor
