#pragma once
// The files of one run directory that the supervisor owns: choosing a new directory (time-sorted,
// never overwriting another run) or the one being resumed, the resolved job.json, the launcher's log,
// the newest checkpoint, and summary.json, which the trainer writes and the supervisor completes with
// what only it knows (final status after a failure, restarts, world size, root cause). For the user's
// own script, which writes no summary, the supervisor writes all of it. It also notices the directory
// being deleted (or replaced) under a live run, and removes the temp files a killed rank was writing.
// A run on this machine holds the directory's supervisor lock (run_lock.h) from prepare() until the run
// ends, so a reader can tell it is running, or interrupted when this process died without a final status.
// A new directory is created exclusively (two launches in the same second never share or delete one); a
// directory that holds a symbolic link is refused (protocol/safe_files.h); whole files are written atomically
// with the folder synced, logs appended all or nothing. The first write that fails (a full disk) is reported
// once through the write-failure handler; writing goes on, and succeeds again once there is space.

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QMap>
#include <QString>
#include <QStringList>

#include <functional>
#include <string>

#include "supervisor/appending_file.h"
#include "supervisor/job_spec.h"
#include "protocol/run_layout.h"
#include "protocol/run_lock.h"
#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

// One entry of summary.json's "stragglers": {"rank", "message", "time" (UTC, ISO 8601)}.
QJsonObject stragglerRecord(int rank, const QString& message);

class RunDirectory
{
public:
    // Picks (for a resume: finds) the directory, creates it with logs/, takes its supervisor lock when
    // holdRunLock (a run on this machine; a resume of a directory another process is running is refused
    // before anything is written), writes the resolved job.json and opens logs/launcher.log. Returns false
    // with *error set; for a new run nothing is left behind.
    bool prepare(const JobSpec& job, int masterPort, const QString& trainerPath, QString* error, bool holdRunLock);
    // Lets go of the supervisor lock: call once the final status is on disk (patchSummary returned true). A
    // run whose final status could not be written keeps it until this process ends, and is then listed
    // "interrupted", not as a status it does not have.
    void releaseRunLock() { m_runLock.release(); }

    // Called once, with one line, at the first write into the run directory that fails (the file and the
    // system's reason, e.g. a full disk). Later failures are counted, not repeated.
    void setWriteFailureHandler(std::function<void(const QString& line)> handler) { m_onWriteFailure = std::move(handler); }
    // What the rank logs and scalars.csv report through (the same once-only line).
    void reportWriteFailure(const QString& path, const QString& reason);
    int writeFailures() const { return m_writeFailures; }

    // Takes over an existing run directory without writing anything but the launcher's log (a Slurm run
    // followed again after the launcher that submitted it exited). False with *error set when it has no job.json.
    bool adopt(const QString& path, QString* error);
    QString path() const { return m_path; }
    // A file of the run directory by its name in core/protocol/run_layout.h ("job.json", "logs/rank-3.log").
    QString file(const char* relative) const { return m_path + QLatin1Char('/') + QLatin1String(relative); }
    QString file(const std::string& relative) const { return m_path + QLatin1Char('/') + QString::fromStdString(relative); }
    QString jobFile() const { return file(protocol::kJobFile); }
    QString rankLog(int rank) const { return file(protocol::rankLogFile(rank)); }
    // Every thread's stack of rank N, taken when the group hung (stack_dumps.h; script_environment.h names it).
    QString rankStacks(int rank) const;
    // Removes what ranks 0..worldSize-1 made in logs/ in case they hung and that no longer means anything: a stacks
    // file that holds nothing (a script's rank creates its own at start-up, python/sitecustomize.py), and PyTorch's
    // named pipe for NCCL trace requests (a reader of the traces would block on it). Called when a run ends.
    void removeRankLeftovers(int worldSize) const;
    // The newest checkpoints/step-*.pt, or empty.
    QString latestCheckpoint() const;
    // summary.json's "status" as the trainer wrote it, or empty.
    QString summaryStatus() const;
    // Empty while the directory prepare() or adopt() took is still there; else one line saying that it
    // was deleted or replaced by another folder of the same name (checked by device and inode).
    QString lostReason() const;
    // Removes the temp files (NAME.tmp-PID: the trainer's atomic writes) that process PID left in the
    // directory and in checkpoints/ when it was killed mid-write; returns their paths.
    QStringList removeTempFilesOf(qint64 pid) const;

    struct Outcome
    {
        RunState state = RunState::Failed;
        int restarts = 0;
        int worldSize = 0;
        qint64 metricsReceived = 0;
        RootCause rootCause;
        QString message;                    // the supervisor's word on the end; it also sets the status
        bool supervisorOwnsSummary = false; // a script run: status and seconds are the supervisor's
        qint64 lastStep = -1;               // the step of the last scalar received (-1: none)
        QMap<QString, double> lastScalars;  // the last value of each scalar received
        QJsonArray stragglers;              // stragglerRecord()s of the ranks named during the run
    };
    // Completes summary.json (atomically) with the supervisor's view; a failure overrides the status. False
    // when it could not be written (reported).
    bool patchSummary(const Outcome& outcome);
    // Writes commands.json (atomically): what each rank of the current launch runs (rank_command.h).
    bool writeCommands(const QJsonObject& record);
    // Appends one timestamped line to logs/launcher.log.
    void log(const QString& message);

private:
    void rememberIdentity();
    void openLauncherLog();
    bool writeWhole(const QString& path, const QByteArray& bytes);

    QString m_path;
    quint64 m_device = 0;                   // the directory's st_dev and st_ino when it was taken
    quint64 m_inode = 0;
    AppendingFile m_launcherLog;
    std::function<void(const QString&)> m_onWriteFailure;
    int m_writeFailures = 0;
    protocol::RunLock m_runLock;
    QElapsedTimer m_clock;                  // since prepare(): the run's seconds when the program writes none
};

} // namespace ringmaster::supervisor
