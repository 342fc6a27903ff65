#include "preflight.h"

#include "gpu_inventory.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
#include <QSet>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTemporaryFile>

namespace ringmaster::supervisor {
namespace {

constexpr int kValidateTimeoutMs = 60000;

QString checkGpus(const JobSpec& job)
{
    if (job.device == QLatin1String("cpu")) {
        if (job.nproc < 1) return QStringLiteral("--nproc %1: need at least 1 CPU rank").arg(job.nproc);
        if (!job.gpus.isEmpty()) return QStringLiteral("--gpus was given with --device cpu: use --device cuda to train on GPUs");
        return {};
    }
    if (job.device != QLatin1String("cuda")) {
        return QStringLiteral("--device %1: unknown device (valid: cpu|cuda)").arg(job.device);
    }
    const int available = nvidiaGpuCount();
    if (job.gpus.isEmpty()) {
        if (available == 0) return QStringLiteral("--device cuda: no NVIDIA GPU found (no driver?): use --device cpu");
        return {};
    }
    QSet<int> seen;
    for (const int gpu : job.gpus) {
        if (seen.contains(gpu)) {
            return QStringLiteral("--gpus: GPU %1 is listed twice: each rank needs its own GPU").arg(gpu);
        }
        seen.insert(gpu);
    }
    for (const int gpu : job.gpus) {
        if (gpu < 0 || gpu >= available) {
            return QStringLiteral("--gpus: GPU %1 does not exist (%2 NVIDIA GPU(s) found%3): pick from 0..%4 or use --device cpu")
                .arg(gpu).arg(available)
                .arg(available == 0 ? QStringLiteral(", no driver loaded") : QString())
                .arg(std::max(0, available - 1));
        }
    }
    return {};
}

} // namespace

QString checkOutputFolder(const QString& target)
{
    QFileInfo info(target);
    QString existing = info.absoluteFilePath();
    while (!QFileInfo::exists(existing)) existing = QFileInfo(existing).absolutePath();
    QFileInfo parent(existing);
    // Permission bits say nothing for root or for read-only mounts (/proc, a full disk's quota):
    // try what the run will do, create a file there.
    QTemporaryFile probe(existing + QStringLiteral("/.ringmaster-write-test-XXXXXX"));
    if (!parent.isDir() || !probe.open()) {
        return QStringLiteral("output folder %1 is not writable (%2 is %3): choose another with --out or --output-root")
            .arg(info.absoluteFilePath(), existing, parent.isDir() ? QStringLiteral("read-only") : QStringLiteral("not a folder"));
    }
    return {};
}

namespace {

QString validateWithTrainer(const QString& trainer, const JobSpec& job)
{
    QTemporaryFile jobFile(QDir::tempPath() + QStringLiteral("/ringmaster-job-XXXXXX.json"));
    if (!jobFile.open()) return QStringLiteral("cannot write a temporary job file in %1").arg(QDir::tempPath());
    jobFile.write(QJsonDocument(job.toJson()).toJson());
    jobFile.flush();
    QProcess process;
    QStringList arguments{QStringLiteral("--job"), jobFile.fileName(), QStringLiteral("--validate-only"),
                          QStringLiteral("--device"), job.device};
    process.setProgram(trainer);
    process.setArguments(arguments);
    auto environment = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"}) {
        environment.remove(QString::fromLatin1(name));
    }
    process.setProcessEnvironment(environment);
    process.start();
    if (!process.waitForFinished(kValidateTimeoutMs)) {
        process.kill();
        process.waitForFinished();
        return QStringLiteral("%1 --validate-only did not answer in %2 s").arg(trainer).arg(kValidateTimeoutMs / 1000);
    }
    if (process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0) return {};
    QString message = QString::fromUtf8(process.readAllStandardError()).trimmed();
    if (message.isEmpty()) message = QString::fromUtf8(process.readAllStandardOutput()).trimmed();
    message.remove(QStringLiteral("ringmaster-trainer: error: "));
    return message.isEmpty() ? QStringLiteral("the trainer rejected the job (exit code %1)").arg(process.exitCode()) : message;
}

} // namespace

int nvidiaGpuCount()
{
    const GpuInventory inventory;
    if (inventory.available()) return static_cast<int>(inventory.query().size());
    return static_cast<int>(QDir(QStringLiteral("/proc/driver/nvidia/gpus")).entryList(QDir::Dirs | QDir::NoDotAndDotDot).size());
}

bool portIsFree(int port)
{
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, static_cast<quint16>(port));
}

int pickFreePort()
{
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, 0) ? probe.serverPort() : 0;
}

QString locateTrainer(const JobSpec& job)
{
    if (!job.trainerPath.isEmpty()) return QFileInfo(job.trainerPath).absoluteFilePath();
    if (const QString fromEnvironment = qEnvironmentVariable("RINGMASTER_TRAINER"); !fromEnvironment.isEmpty()) {
        return QFileInfo(fromEnvironment).absoluteFilePath();
    }
    const QString beside = QCoreApplication::applicationDirPath() + QStringLiteral("/ringmaster-trainer");
    if (QFileInfo(beside).isExecutable()) return beside;
    return QStandardPaths::findExecutable(QStringLiteral("ringmaster-trainer"));
}

PreflightResult runPreflight(const JobSpec& job)
{
    PreflightResult result;
    result.trainerPath = locateTrainer(job);
    if (result.trainerPath.isEmpty() || !QFileInfo(result.trainerPath).isExecutable()) {
        result.error = QStringLiteral("ringmaster-trainer not found%1: build it, or give its path with --trainer PATH")
                           .arg(result.trainerPath.isEmpty() ? QString() : QStringLiteral(" at ") + result.trainerPath);
        return result;
    }
    if (job.maxRestarts < 0) { result.error = QStringLiteral("--max-restarts: must be >= 0"); return result; }
    if (!(job.heartbeatTimeoutSec > 0)) { result.error = QStringLiteral("--heartbeat-timeout: must be > 0 seconds"); return result; }
    if (!(job.gracePeriodSec >= 0)) { result.error = QStringLiteral("--grace-period: must be >= 0 seconds"); return result; }
    if (!(result.error = checkGpus(job)).isEmpty()) return result;
    const QString outputTarget = job.runDir.isEmpty() ? job.outputRoot : QFileInfo(job.runDir).absolutePath();
    if (!(result.error = checkOutputFolder(outputTarget)).isEmpty()) return result;
    if (!(result.error = validateWithTrainer(result.trainerPath, job)).isEmpty()) return result;
    if (job.masterPort < 0 || job.masterPort > 65535) {
        result.error = QStringLiteral("--master-port %1: must be in 1..65535, or 0 to pick a free one").arg(job.masterPort);
        return result;
    }
    if (job.masterPort == 0) {
        result.masterPort = pickFreePort();
        if (result.masterPort == 0) result.error = QStringLiteral("no free TCP port on 127.0.0.1 for the rendezvous");
    } else if (!portIsFree(job.masterPort)) {
        result.error = QStringLiteral("--master-port %1 is already in use on this machine: choose another, or 0 to pick a free one")
                           .arg(job.masterPort);
    } else {
        result.masterPort = job.masterPort;
    }
    return result;
}

} // namespace ringmaster::supervisor
