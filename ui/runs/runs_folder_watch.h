#pragma once
// Tells the Runs tab when its listing is out of date because something outside this window changed the run
// folders: a run started by ringmaster-launch in a terminal appears in a root, a run that was going on
// writes its summary.json. It watches (QFileSystemWatcher: inotify on Linux) the roots, the runs that have
// not ended, and the folders of a root that are not runs yet (a run's folder exists before its job.json);
// a burst of changes is coalesced (kSettleMs), and a slow poll (setPollInterval, for file systems without
// change notification such as NFS) checks the same folders while the tab is shown.
//
// A change notice alone is not trusted, because listing itself writes in those folders (each run's index
// and the root's index, hidden files) and would otherwise list again forever. So each watched folder has a
// signature: its visible entries' names, plus the identity and time of job.json, summary.json and
// notes.json (which Ringmaster replaces whole), and whether the run's supervisor lock is held (a launcher or app
// that dies changes no file, yet its run goes from running to interrupted: the poll sees it). The listing
// computes the signatures on its worker thread
// *before* it reads the runs (signaturesBefore), so a change made while it reads is seen afterwards; a
// folder first watched after a listing (a new run) has no signature yet and is checked once at once.
// Checks run on a worker thread (QtConcurrent); changed() is emitted when a signature differs.

#include <QFutureWatcher>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>

#include "runs/run_record.h"

class QFileSystemWatcher;

namespace ringmaster::ui {

class RunsFolderWatch : public QObject
{
    Q_OBJECT

public:
    static constexpr int kSettleMs = 250;
    static constexpr int kDefaultPollMs = 5000;
    static constexpr int kMaxWatched = 512;   // folders (inotify watches are a per-user budget)

    explicit RunsFolderWatch(QObject* parent = nullptr);
    ~RunsFolderWatch() override;

    // What a folder holds, as compared (see above); empty when it cannot be read. Any thread.
    static QByteArray signature(const QString& folder);
    // The signatures of FOLDERS now. Any thread.
    static QHash<QString, QByteArray> signatures(const QStringList& folders);
    // The folders to watch after a listing of ROOTS gave RUNS: the roots, every run that has not ended
    // (no final status), and each root's child folders that are not runs. Any thread (reads the roots).
    static QStringList foldersToWatch(const QStringList& roots, const QList<runs::RunRecord>& runs);

    // The folders watched now (the listing computes their signatures before it reads the runs).
    QStringList watched() const { return m_known.keys(); }
    // After a listing: watch FOLDERS; BEFORE holds the signatures taken before the listing read the runs.
    void watch(const QStringList& folders, const QHash<QString, QByteArray>& before);
    // The slow poll's period in milliseconds while polling is on (0: no poll, change notices only).
    void setPollInterval(int ms);
    // The poll runs only while the tab is shown; a check runs at once when it is shown again.
    void setPolling(bool on);
    // Checks the watched folders now (off the GUI thread); changed() follows if one differs.
    void checkAll();

Q_SIGNALS:
    void changed();
    // A check ended; CHANGED tells whether a folder differed from its listing (changed() follows then).
    void checked(bool changed);

private:
    void onDirectoryChanged(const QString& path);
    void startCheck();
    void onChecked();

    QFileSystemWatcher* m_watcher;
    QTimer m_settle;
    QTimer m_poll;
    int m_pollMs = kDefaultPollMs;
    bool m_polling = false;
    QHash<QString, QByteArray> m_known;   // watched folder -> its signature as last listed ("" unknown)
    QSet<QString> m_dirty;                // folders noticed changing, not checked yet
    QFutureWatcher<bool> m_check;
    bool m_checkAgain = false;
};

} // namespace ringmaster::ui
