#pragma once
// One trainer rank as a child process. Started with an argument list (never a shell); in the child,
// before exec: joins the job's process group (rank 0 founds it with setpgid(0, 0); the result is
// checked in the child, which exits 126 with a message on failure, and again in the parent), asks
// the kernel to SIGKILL it if the supervisor dies (PR_SET_PDEATHSIG), and marks every inherited
// descriptor above stderr close-on-exec. stdin is /dev/null. stdout and stderr are split into lines,
// timestamped and appended to logs/rank-N.log, and emitted as lines. What is buffered stays bounded: a line
// redrawn with carriage returns (a progress bar) keeps only its last state, and a line longer than
// kMaxLineBytes is logged in pieces of that size as it arrives. The log rotates at kLogRotateBytes
// (appending_file.h): a week-long run keeps the newest lines, not every line.

#include <QObject>
#include <QProcess>
#include <QStringList>

#include <functional>
#include <sys/types.h>

#include "supervisor/appending_file.h"

namespace ringmaster::supervisor {

class RankProcess : public QObject
{
    Q_OBJECT

public:
    RankProcess(int rank, const QString& logPath, QObject* parent = nullptr);
    ~RankProcess() override;

    // groupLeader: the job's process group id, or 0 to found a new group (rank 0).
    void start(const QString& program, const QStringList& arguments, const QProcessEnvironment& environment,
               pid_t groupLeader);
    // Told (path, the system's reason) when a line cannot be written to the log (a full disk); the line is
    // still emitted and kept in memory.
    void setWriteFailureHandler(std::function<void(const QString&, const QString&)> handler) { m_onWriteFailure = std::move(handler); }
    int rank() const { return m_rank; }
    qint64 pid() const { return m_pid; }
    bool isRunning() const { return m_process.state() != QProcess::NotRunning; }
    // Waits (bounded) for the process to be reaped after it was killed.
    bool waitForFinished(int msecs) { return m_process.waitForFinished(msecs); }
    // The last lines it printed (kept in memory for failure reports; the file has them all).
    QStringList lastLines(int count) const;
    // What is held of a stdout line that has not ended yet (bounded: see above).
    QByteArray unfinishedOutputLine() const { return m_partialOut; }

Q_SIGNALS:
    void finished(int rank, int exitCode, int exitSignal);
    void failedToStart(int rank, const QString& error);
    void lineLogged(int rank, const QString& line);

private:
    void drain(QProcess::ProcessChannel channel, QByteArray& partial, const char* tag, bool flushAll);
    void writeLine(const char* tag, const QByteArray& line);
    void failStart(const QString& why);

    static constexpr int kTailLines = 200;
    static constexpr qsizetype kMaxLineBytes = 64 * 1024;
    static constexpr int kStartTimeoutMs = 10000;

    int m_rank;
    QProcess m_process;
    AppendingFile m_log;
    std::function<void(const QString&, const QString&)> m_onWriteFailure;
    QByteArray m_partialOut;
    QByteArray m_partialErr;
    QStringList m_tail;
    qint64 m_pid = 0;
    bool m_reportedEnd = false;
};

QString signalName(int signal);

} // namespace ringmaster::supervisor
