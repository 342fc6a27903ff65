#pragma once
// Every thread's stack of each rank of a hung group, taken before the group is killed, so that "hung" comes
// with where each rank was waiting (issue 26). One `gdb -batch -nx -p PID -ex "thread apply all bt"` per rank,
// all at once, never through a shell, each bounded by a timeout, written to RUN_DIR/logs/rank-N.stacks.txt.
// gdb attaches to a stopped process (SIGSTOP) as well as to one blocked in a collective, and detaches leaving it
// as it was; its frames name the trainer's functions and lines (the build keeps line tables) and, for a script's
// rank, the interpreter's C frames, followed by its Python stacks from `py-spy dump --pid PID` when py-spy is
// beside the interpreter or on PATH. Without gdb, or when it cannot attach (another debugger holds the process,
// ptrace is restricted), the file and the summary say so, and the group is killed all the same.

#include <QList>
#include <QByteArray>
#include <QObject>
#include <QString>
#include <QStringList>

#include <functional>

namespace ringmaster::supervisor {

class StackDumps : public QObject
{
    Q_OBJECT

public:
    static constexpr int kTimeoutMs = 30000; // per tool; gdb takes about 3 s per trainer rank on a busy 2-core machine
    // gdb loads LibTorch's symbols (hundreds of MB with CUDA): at most this many ranks are dumped at once.
    static constexpr int kMaxConcurrent = 4;
    static constexpr int kDeadlineMarginMs = 2000;

    struct Target
    {
        int rank = 0;
        qint64 pid = 0;
        QString path;       // where the stacks go
        QString pythonSpy;  // a script's rank: py-spy, for its Python stacks after gdb's (empty: none)
    };

    explicit StackDumps(QObject* parent = nullptr);
    ~StackDumps() override; // a tool still running is killed (its target is left as it was)

    // gdb's path, or empty when it is not installed.
    static QString debugger();
    // The py-spy for a script's interpreter: beside it (its virtual environment's), else on PATH, else empty.
    static QString pythonSpyFor(const QString& interpreter);

    // One dump per target, kMaxConcurrent at a time, each appended to its file under a dated header;
    // finished() follows when every one has ended or timed out, and in any case by the deadline (every round of
    // kMaxConcurrent targets given gdb's and py-spy's timeouts, plus kDeadlineMarginMs), also when a tool
    // cannot be ended. At once when there is no target. Call once.
    void start(const QList<Target>& targets, int timeoutMs = kTimeoutMs);

Q_SIGNALS:
    // One line per target, in rank order: "rank 1: 9 thread(s)' stacks[, 2 Python thread(s)] in PATH", with
    // "(gdb took longer than …)" when a tool was stopped part way, or "rank 1: no stacks (REASON)".
    void finished(const QStringList& summary);

private:
    struct Result
    {
        int threads = 0;
        int pythonThreads = 0;
        QString trouble;
        bool writeFailed = false;
        bool done = false;
    };
    void startNext();
    void run(const QString& program, const QStringList& arguments,
             std::function<void(const QByteArray& output, const QString& trouble)> then);
    void append(int index, const QByteArray& bytes);
    void afterGdb(int index, const QByteArray& output, const QString& trouble);
    void addTrouble(int index, const QString& trouble);
    void finish(int index);

    QList<Target> m_targets;
    QList<Result> m_results;
    QStringList m_summary;
    QList<int> m_queue; // targets not started yet
    int m_pending = 0;
    int m_timeoutMs = kTimeoutMs;
};

} // namespace ringmaster::supervisor
