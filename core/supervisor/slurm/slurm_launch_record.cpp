#include "supervisor/slurm/slurm_launch_record.h"

#include <QDir>
#include <QFileInfo>
#include <QJsonArray>
#include <QStringList>

#include "protocol/run_layout.h"
#include "protocol/wire.h"
#include "supervisor/script_environment.h"

namespace ringmaster::supervisor {
namespace {

// The value sbatch gives SLURM_CPUS_PER_TASK (from a "--cpus-per-task=N" extra argument), else 1: what
// the batch script's OMP_NUM_THREADS default comes to.
QString cpusPerTask(const SlurmRequest& request)
{
    const QString option = QStringLiteral("--cpus-per-task=");
    QString cpus = QStringLiteral("1");
    for (const QString& extra : request.extraArgs) {
        if (extra.startsWith(option)) cpus = extra.mid(option.size());
    }
    return cpus;
}

} // namespace

QJsonObject slurmLaunchRecord(const BatchScriptInput& input, const QString& jobId, const SubmitterOffer& offer,
                              const QProcessEnvironment& base)
{
    const JobSpec& job = input.job;
    const int tasksPerNode = slurmTasksPerNode(job, input.request);
    const int world = input.request.nodes * tasksPerNode;
    bool numeric = false;
    const qint64 id = jobId.toLongLong(&numeric);
    const QString port = numeric ? QString::number(kSlurmMasterPortBase + id % kSlurmMasterPortSpan) : QString();
    QStringList program;
    if (job.isScript()) program = QStringList{input.interpreterPath, input.scriptPath} + job.scriptArgs;
    else {
        program = QStringList{input.trainerPath, QStringLiteral("--job"), input.jobFile, QStringLiteral("--out"), input.runDir,
                              QStringLiteral("--device"), job.device};
        if (!input.resumeFrom.isEmpty()) program << QStringLiteral("--resume") << input.resumeFrom;
    }
    QJsonArray ranks;
    for (int rank = 0; rank < world; ++rank) {
        const int node = rank / tasksPerNode;
        QJsonObject environment;
        // The batch script unsets a launcher's per-process variables (the contract, the socket) before
        // setting them, so those are always recorded; the others only where they differ from what the
        // submitting environment passes on.
        auto set = [&](const char* name, const QString& value) { environment.insert(QString::fromLatin1(name), value); };
        auto setUnlessInherited = [&](const char* name, const QString& value) {
            const QString key = QString::fromLatin1(name);
            if (!(base.contains(key) && base.value(key) == value)) environment.insert(key, value);
        };
        set("RANK", QString::number(rank));
        set("LOCAL_RANK", QString::number(rank % tasksPerNode));
        set("WORLD_SIZE", QString::number(world));
        set("LOCAL_WORLD_SIZE", QString::number(tasksPerNode));
        set("MASTER_ADDR", QString::fromLatin1(kFirstNodeText));
        set("MASTER_PORT", port);
        if (job.device == QLatin1String("cuda")) {
            for (const auto& [name, value] : ncclTraceEnvironment(input.runDir)) {
                if (!base.contains(name)) environment.insert(name, value);
            }
        }
        if (job.isScript()) {
            set("GROUP_RANK", QString::number(node));
            set("GROUP_WORLD_SIZE", QString::number(input.request.nodes));
            set("ROLE_NAME", QStringLiteral("default"));
            set("ROLE_RANK", QString::number(rank));
            set("ROLE_WORLD_SIZE", QString::number(world));
            set("TORCHELASTIC_RESTART_COUNT", QString::number(input.restartCount));
            set("TORCHELASTIC_MAX_RESTARTS", QString::number(job.maxRestarts));
            set("TORCHELASTIC_RUN_ID", QFileInfo(QDir::cleanPath(input.runDir)).fileName());
            setUnlessInherited("RINGMASTER_RUN_DIR", input.runDir);
            setUnlessInherited("PYTHONUNBUFFERED", QStringLiteral("1"));
            if (!base.contains(QStringLiteral("OMP_NUM_THREADS"))) setUnlessInherited("OMP_NUM_THREADS", cpusPerTask(input.request));
            set(kErrorFileVariable, errorFileOf(input.runDir, QString::number(rank)));
            set(kStacksFileVariable, stacksFileOf(input.runDir, QString::number(rank)));
            set(kStacksSignalVariable, QString::number(pythonStacksSignal()));
            for (const auto& [name, value] : scriptDefaultsFor(job.device)) {
                if (!base.contains(QString::fromLatin1(name))) set(name, QString::fromLatin1(value));
            }
            if (!input.helperDir.isEmpty()) {
                const QString inherited = base.value(QStringLiteral("PYTHONPATH"));
                setUnlessInherited("PYTHONPATH", inherited.isEmpty() ? input.helperDir : input.helperDir + QLatin1Char(':') + inherited);
            }
        }
        if (!offer.socketPath.isEmpty()) set(protocol::kSocketEnv, offer.socketPath);
        if (!offer.endpoint.isEmpty()) set(protocol::kEndpointEnv, offer.endpoint);
        if (offer.token) environment.insert(QString::fromLatin1(protocol::kTokenEnv), QStringLiteral("(secret)"));
        ranks.append(QJsonObject{{QStringLiteral("rank"), rank},
                                 {QStringLiteral("node"), node},
                                 {QStringLiteral("program"), program.first()},
                                 {QStringLiteral("arguments"), QJsonArray::fromStringList(program.mid(1))},
                                 {QStringLiteral("environment"), environment}});
    }
    return QJsonObject{{QStringLiteral("restart"), input.restartCount},
                       {QStringLiteral("slurm_job_id"), jobId},
                       {QStringLiteral("batch_script"), QDir(input.runDir).filePath(QLatin1String(protocol::kSlurmBatchScriptFile))},
                       {QStringLiteral("ranks"), ranks}};
}

} // namespace ringmaster::supervisor
