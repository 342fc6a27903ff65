#pragma once
// Follows the TensorBoard event files that a user's training script writes (issue 9, metrics way 3), so
// that its scalars reach the chart and scalars.csv live, whatever library wrote them (TensorBoard's
// SummaryWriter, tensorboardX, torch.utils.tensorboard, TF): every events.out.tfevents.* file under a folder,
// at any depth, found as it appears and read as it grows.
//
// A poll (every pollIntervalMs from a QTimer, and on pollNow()) reads each file from where the last one
// stopped: only complete records are used, a record cut short by the writer is read on a later poll. Every
// checksum is checked (the format is in core/protocol/tensorboard_records.h): a record whose data checksum
// fails is skipped; one whose length checksum fails leaves no way to find the next record, so the rest of that
// file is abandoned. Each file gets at most one warning for each kind of damage. Scalars are simple_value
// and one-element float/double tensors; every other kind of value or event is skipped silently.
// A file that shrinks (rewritten from the start) is read again from the start.
// The timer's polls walk the folder and read the files on a worker thread (a script's folder may hold thousands
// of files, and a week of logs): what they found is applied and emitted on this object's thread when they end,
// and a poll never overlaps the previous one. pollNow() is the same work, done before it returns.

#include <QFutureWatcher>
#include <QHash>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

namespace ringmaster::supervisor {

class TensorBoardFollower : public QObject
{
    Q_OBJECT

public:
    static constexpr int kDefaultPollIntervalMs = 500;
    // At most this much of one file is read per poll, so a large existing log never stalls the event loop.
    static constexpr qint64 kMaxBytesPerPoll = 8 * 1024 * 1024;

    explicit TensorBoardFollower(QString folder, QObject* parent = nullptr, int pollIntervalMs = kDefaultPollIntervalMs);

    // Marks every event file under the folder now as an earlier run's: it is never read, only files that appear
    // later are (a --tensorboard-dir that runs share, such as Lightning's lightning_logs/ or SummaryWriter's
    // runs/). Call before start(); returns how many files it marked.
    int skipFilesPresentNow();
    // Never reads the event files under FOLDER (the launcher's own system metrics, RUN_DIR/tb/system, when the
    // followed folder is the run directory). Call before start().
    void ignoreFolder(const QString& folder);
    void start(); // polls at once, then every interval
    void stop();
    // One poll now: finds new files and reads what was appended (also for a last read when a run ends); its
    // signals are emitted before it returns.
    void pollNow();
    // The same on a worker thread (the timer's); nothing when one is still running.
    void pollInBackground();

    QString folder() const { return m_folder; }

Q_SIGNALS:
    void scalar(qint64 step, const QString& tag, double value, double wallTime);
    // One line naming the file and the damage, for the launcher's log.
    void warning(const QString& message);

public:
    struct FileState
    {
        qint64 offset = 0;        // bytes of complete records already handled
        bool abandoned = false;   // framing lost: nothing more is read from this file
        bool earlier = false;     // there before this run began (skipFilesPresentNow): never read
        bool warnedBadData = false;
        bool warnedUndecodable = false;
        bool warnedOversized = false;
    };
    struct Found
    {
        qint64 step = 0;
        QString tag;
        double value = 0;
        double wallTime = 0;
    };
    // What one poll read: the files' new states, the scalars in order, the warnings. No QObject involved.
    struct Poll
    {
        QHash<QString, FileState> files;
        QList<Found> scalars;
        QStringList warnings;
    };
    static Poll poll(const QString& folder, QHash<QString, FileState> files, const QString& ignored = {});
    // Tests: every poll takes at least this long (0, the default: no delay), to show it does not block the caller.
    static void setPollDelayForTests(int milliseconds);

private:
    void apply(const Poll& result);

    QString m_folder;
    QString m_ignored; // a folder under m_folder whose files are never read (absolute, ending in '/')
    QTimer m_timer;
    QHash<QString, FileState> m_files;
    QFutureWatcher<Poll> m_background;
    bool m_backgroundPending = false; // a background poll whose result is not applied yet
};

} // namespace ringmaster::supervisor
