#include "supervisor/run_event.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QStringList>

#include "protocol/run_layout.h"
#include "supervisor/run_supervisor.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kMessageScalarNames = 4; // a script's last values in the message (alphabetical)

QJsonObject readSummary(const QString& runDir)
{
    QFile file(QDir(runDir).filePath(QLatin1String(protocol::kSummaryFile)));
    if (!file.open(QIODevice::ReadOnly)) return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

QString number(const QJsonValue& value) { return QString::number(value.toDouble(), 'g', 5); }

// "400 steps, loss 0.3412, val_accuracy 0.8521, 1:05" for the trainer; "step 15: acc 0.9, loss 0.07" for a
// script; what summary.json does not hold is left out.
QString outcomeOf(const QJsonObject& summary)
{
    QStringList parts;
    if (summary.contains(QStringLiteral("steps"))) {
        parts << QStringLiteral("%1 steps").arg(summary.value(QStringLiteral("steps")).toInteger());
        if (summary.value(QStringLiteral("final_loss")).isDouble()) parts << QStringLiteral("loss ") + number(summary.value(QStringLiteral("final_loss")));
        if (summary.value(QStringLiteral("val_accuracy")).isDouble()) {
            parts << QStringLiteral("val_accuracy ") + number(summary.value(QStringLiteral("val_accuracy")));
        }
    } else if (summary.contains(QStringLiteral("last_step"))) {
        const QJsonObject last = summary.value(QStringLiteral("last_scalars")).toObject();
        QStringList values;
        for (auto it = last.constBegin(); it != last.constEnd() && values.size() < kMessageScalarNames; ++it) {
            values << QStringLiteral("%1 %2").arg(it.key(), number(it.value()));
        }
        parts << QStringLiteral("step %1").arg(summary.value(QStringLiteral("last_step")).toInteger()) +
                     (values.isEmpty() ? QString() : QStringLiteral(": ") + values.join(QStringLiteral(", ")));
    }
    if (summary.value(QStringLiteral("seconds")).isDouble()) parts << formatDuration(summary.value(QStringLiteral("seconds")).toDouble());
    if (const int restarts = summary.value(QStringLiteral("restarts")).toInt(); restarts > 0) {
        parts << QStringLiteral("%1 restart(s)").arg(restarts);
    }
    return parts.join(QStringLiteral(", "));
}

} // namespace

QString runEventKindName(RunEvent::Kind kind)
{
    switch (kind) {
    case RunEvent::Kind::Completed: return QStringLiteral("completed");
    case RunEvent::Kind::Failed: return QStringLiteral("failed");
    case RunEvent::Kind::Stopped: return QStringLiteral("stopped");
    case RunEvent::Kind::Hung: return QStringLiteral("hung");
    case RunEvent::Kind::Straggler: return QStringLiteral("straggler");
    }
    return {};
}

QJsonObject RunEvent::toJson() const
{
    QJsonObject json{
        {QStringLiteral("event"), runEventKindName(kind)},
        {QStringLiteral("time"), time.toUTC().toString(Qt::ISODateWithMs)},
        {QStringLiteral("run"), QFileInfo(runDir).fileName()},
        {QStringLiteral("run_dir"), runDir},
        {QStringLiteral("title"), title},
        {QStringLiteral("message"), message},
    };
    json.insert(QStringLiteral("job_id"), jobId.isEmpty() ? QJsonValue() : QJsonValue(jobId));
    json.insert(QStringLiteral("rank"), rank >= 0 ? QJsonValue(rank) : QJsonValue());
    json.insert(QStringLiteral("summary"), summary.isEmpty() ? QJsonValue() : QJsonValue(summary));
    return json;
}

RunEventWatch::RunEventWatch(RunSupervisor* supervisor, QObject* parent)
    : QObject(parent)
    , m_supervisor(supervisor)
{
    connect(supervisor, &RunSupervisor::rankChanged, this, &RunEventWatch::onRankChanged);
    connect(supervisor, &RunSupervisor::finished, this, &RunEventWatch::onFinished);
    connect(supervisor, &RunSupervisor::stragglerNamed, this, &RunEventWatch::onStraggler);
    // A new launch (or a relaunch after a failure) starts its ranks afresh: a rank may hang again.
    connect(supervisor, &RunSupervisor::stateChanged, this, [this](RunState state) {
        if (state == RunState::Starting) m_hung.clear();
    });
}

RunEvent RunEventWatch::eventOf(RunEvent::Kind kind) const
{
    RunEvent event;
    event.kind = kind;
    event.time = QDateTime::currentDateTimeUtc();
    event.runDir = QFileInfo(m_supervisor->runDir()).absoluteFilePath();
    event.jobId = m_supervisor->jobId();
    event.title = QStringLiteral("run %1 %2").arg(QFileInfo(event.runDir).fileName(), runEventKindName(kind));
    return event;
}

void RunEventWatch::onRankChanged(int rank)
{
    const QList<RankStatus> ranks = m_supervisor->ranks();
    if (rank < 0 || rank >= ranks.size() || ranks.at(rank).state != RankState::Hung || m_hung.contains(rank)) return;
    m_hung.insert(rank);
    RunEvent event = eventOf(RunEvent::Kind::Hung);
    event.rank = rank;
    const RootCause cause = m_supervisor->rootCause();
    event.message = cause.rank == rank ? cause.summary() : QStringLiteral("rank %1 stopped reporting").arg(rank);
    Q_EMIT happened(event);
}

void RunEventWatch::onStraggler(int rank, const QString& message)
{
    RunEvent event = eventOf(RunEvent::Kind::Straggler);
    event.rank = rank;
    event.title = QStringLiteral("run %1: rank %2 is a straggler").arg(QFileInfo(event.runDir).fileName()).arg(rank);
    event.message = message;
    Q_EMIT happened(event);
}

void RunEventWatch::onFinished(RunState state)
{
    const RunEvent::Kind kind = state == RunState::Completed ? RunEvent::Kind::Completed
                                : state == RunState::Failed  ? RunEvent::Kind::Failed
                                                             : RunEvent::Kind::Stopped;
    RunEvent event = eventOf(kind);
    event.summary = readSummary(event.runDir);
    if (kind == RunEvent::Kind::Failed) {
        const RootCause cause = m_supervisor->rootCause();
        event.rank = cause.rank;
        event.message = cause.summary();
    } else {
        event.message = outcomeOf(event.summary);
    }
    Q_EMIT happened(event);
}

} // namespace ringmaster::supervisor
