#include "runs/slurm_job.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

#include "runs/run_files.h"
#include "protocol/wire.h"

namespace ringmaster::runs {
namespace {

constexpr qint64 kMaxSmallFileBytes = 1024 * 1024;   // job.json and slurm/job-id are small; never read a huge one

QByteArray readSmall(const QString& path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly) || file.size() > kMaxSmallFileBytes) return {};
    return file.readAll();
}

bool isJobId(const QString& text)
{
    static const QRegularExpression id(QStringLiteral("^\\d+(_\\d+)?$"));
    return id.match(text).hasMatch();
}

} // namespace

QString slurmJobIdOf(const QString& runDir)
{
    const QDir dir(runDir);
    const QJsonObject job = QJsonDocument::fromJson(readSmall(dir.filePath(QString::fromLatin1(kJobFile)))).object();
    const QJsonObject slurm = job.value(QStringLiteral("launch")).toObject().value(QStringLiteral("slurm")).toObject();
    QString id = slurm.value(QStringLiteral("job_id")).toString().trimmed();
    if (id.isEmpty()) id = QString::fromUtf8(readSmall(dir.filePath(QString::fromLatin1(kSlurmJobIdFile)))).trimmed();
    return isJobId(id) ? id : QString();
}

bool isFinalRunStatus(const QString& status)
{
    return status == QLatin1String(protocol::kStatusCompleted) || status == QLatin1String(protocol::kStatusFailed) ||
           status == QLatin1String(protocol::kStatusStopped);
}

QString unfinishedSlurmJob(const RunRecord& record)
{
    return isFinalRunStatus(record.status) ? QString() : slurmJobIdOf(record.path);
}

} // namespace ringmaster::runs
