#pragma once
// What happened to a run that someone away from the screen wants to hear about: it completed, failed or was
// stopped, or one of its ranks hung (the heartbeat watchdog declared it, before the group is killed and
// perhaps restarted). RunEventWatch follows a RunSupervisor and emits one RunEvent for each such moment:
// one per hung rank, one when the run ends. The event is data; the front ends word it at the edge: the
// launcher's --notify-command hands it to the user's own program as JSON on stdin (notify_command.h), the app
// shows a desktop notification (ui/desktop_notifier.h). A straggler event is sent when the supervisor names a
// rank that computes slower than the others for a while (straggler_detector.h), once per rank until it recovers.

#include <QDateTime>
#include <QJsonObject>
#include <QObject>
#include <QSet>
#include <QString>

#include "supervisor/run_types.h"

namespace ringmaster::supervisor {

class RunSupervisor;

struct RunEvent
{
    enum class Kind { Completed, Failed, Stopped, Hung, Straggler };
    Kind kind = Kind::Completed;
    QDateTime time;
    QString runDir;
    QString jobId;       // Slurm's job id, empty for a run on this machine
    int rank = -1;       // the hung or straggling rank, or the failed run's root-cause rank
    QString title;       // "run 20261203-101500-cnn failed", "run 20261203-101500-cnn: rank 1 is a straggler"
    QString message;     // one line: what happened, with the numbers that matter
    QJsonObject summary; // the run's summary.json when it ended, else empty

    // {"event", "time", "run", "run_dir", "job_id", "rank", "title", "message", "summary"}: docs/launch.md.
    QJsonObject toJson() const;
};

QString runEventKindName(RunEvent::Kind kind);

class RunEventWatch : public QObject
{
    Q_OBJECT

public:
    explicit RunEventWatch(RunSupervisor* supervisor, QObject* parent = nullptr);

Q_SIGNALS:
    void happened(const ringmaster::supervisor::RunEvent& event);

private:
    void onRankChanged(int rank);
    void onFinished(RunState state);
    void onStraggler(int rank, const QString& message);
    RunEvent eventOf(RunEvent::Kind kind) const;

    RunSupervisor* m_supervisor;
    QSet<int> m_hung; // ranks already reported hung in this launch
};

} // namespace ringmaster::supervisor
