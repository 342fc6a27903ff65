#pragma once
// Every thread's stack of each rank of a hung group, taken before the group is killed, so that "hung" comes
// with where each rank was waiting (issue 26). One `gdb -batch -nx -p PID -ex "thread apply all bt"` per rank,
// all at once, never through a shell, each bounded by a timeout, written to RUN_DIR/logs/rank-N.stacks.txt.
// gdb attaches to a stopped process (SIGSTOP) as well as to one blocked in a collective, and detaches leaving it
// as it was; its frames name the trainer's functions and lines (the build keeps line tables) and, for a script's
// rank, the interpreter's C frames, followed by its Python stacks from `py-spy dump --pid PID` when py-spy is
// beside the interpreter or on PATH. Before gdb, a script's rank that catches the Python-stacks signal (python/
// sitecustomize.py registers faulthandler on it; /proc/PID/status says whether it does) is sent it, and its
// faulthandler writes every thread's Python stack into the same file: this needs nothing installed, and works
// while the interpreter is blocked in C, as in a collective that never returns. A rank of an NCCL run is also asked
// for PyTorch's flight-recorder trace, its last collectives, through the pipe PyTorch made for it (script_environment.h
// names both); the summary names the trace file when one came. A rank on another node (a Slurm task) gets gdb through
// srun onto its node (Target::via), which must have gdb on its PATH. Without gdb, or when it cannot attach (another debugger holds the process,
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
    // How long the rank's own dumps may take to appear and to stop growing: faulthandler's (a stopped rank writes
    // nothing), and PyTorch's NCCL trace, which its monitoring thread writes once it reads the pipe.
    static constexpr int kFaulthandlerWaitMs = 3000;
    static constexpr int kNcclTraceWaitMs = 10000;
    static constexpr int kRankDumpPollMs = 100;

    struct Target
    {
        int rank = 0;
        qint64 pid = 0;
        QString path;       // where the stacks go
        QString pythonSpy;  // a script's rank: py-spy, for its Python stacks after gdb's (empty: none)
        int pythonSignal = 0; // a script's rank: the signal its faulthandler writes its stacks on (0: none)
        QString ncclTraceStem = {}; // an NCCL run: PyTorch's flight recorder, asked through STEM<rank>.pipe (empty: none)
        // A rank on another node: the program and arguments that run gdb there (SlurmClient::commandOnNode), and pid
        // is that node's. Empty: gdb runs here. Only gdb goes through it (faulthandler and the NCCL pipe need this host).
        QStringList via = {};
    };

    explicit StackDumps(QObject* parent = nullptr);
    ~StackDumps() override; // a tool still running is killed (its target is left as it was)

    // gdb's path, or empty when it is not installed.
    static QString debugger();
    // The py-spy for a script's interpreter: beside it (its virtual environment's), else on PATH, else empty.
    static QString pythonSpyFor(const QString& interpreter);

    // One dump per target, kMaxConcurrent at a time, each appended to its file under a dated header;
    // finished() follows when every one has ended or timed out, and in any case by the deadline (every round of
    // kMaxConcurrent targets given the rank's own dumps' wait and gdb's and py-spy's timeouts, plus
    // kDeadlineMarginMs), also when a tool
    // cannot be ended. At once when there is no target. Call once.
    void start(const QList<Target>& targets, int timeoutMs = kTimeoutMs);

Q_SIGNALS:
    // One line per target, in rank order: "rank 1: 9 thread(s)' stacks[, 2 Python thread(s)] in PATH" (the
    // Python threads that faulthandler or py-spy found, whichever found more; "rank 1: 2 Python thread(s) in PATH"
    // without gdb's), then "; NCCL trace in FILE" when the flight recorder wrote one, with "(gdb took longer
    // than …)" when a tool was stopped part way, or "rank 1: no stacks (REASON)".
    void finished(const QStringList& summary);

private:
    struct Result
    {
        int threads = 0;
        int pythonThreads = 0;
        QString trouble;
        bool writeFailed = false;
        bool done = false;
        // The rank's own dumps: what was asked, and the sizes seen at the last poll.
        bool askedPython = false;
        bool askedTrace = false;
        qint64 stacksBefore = 0;
        qint64 stacksLast = 0;
        qint64 traceLast = -1;
        qint64 traceBeforeMs = -1; // an earlier trace's modification time (an earlier attempt's), or -1
        int waitedMs = 0;
        QString trace; // the NCCL trace file, once one came
    };
    void startNext();
    void askTheRank(int index);
    bool askFaulthandler(int index);
    bool askFlightRecorder(int index);
    void waitForTheRank(int index);
    void afterTheRank(int index);
    void startGdb(int index);
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
