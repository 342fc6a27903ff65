#include "supervisor/trainer_info.h"

#include "supervisor/check_run.h"
#include "supervisor/preflight.h"
#include "supervisor/program_checks.h"
#include "protocol/trainer_version.h"

#include <QDir>
#include <QRegularExpression>
#include <QStandardPaths>

namespace ringmaster::supervisor {
namespace {

constexpr int kVersionTimeoutMs = 60000;

// "yes (13.0)" -> "13.0"; "yes" -> "yes"; "no (...)" -> "".
QString compiledIn(const QString& value)
{
    namespace words = protocol::trainer_version;
    if (!value.startsWith(QLatin1String(words::kYes))) return {};
    static const QRegularExpression version(QStringLiteral("\\(([^)]+)\\)"));
    const auto match = version.match(value);
    return match.hasMatch() ? match.captured(1) : QString::fromLatin1(words::kYes);
}

} // namespace

QString TrainerInfo::summary() const
{
    if (!known()) return error.isEmpty() ? QStringLiteral("version unknown") : error;
    QString text = QStringLiteral("LibTorch ") + libtorch;
    if (!hasCuda()) return text + QStringLiteral(", CPU only");
    text += QStringLiteral(", CUDA ") + cuda;
    return text + (nccl.isEmpty() ? QStringLiteral(", no NCCL") : QStringLiteral(", NCCL ") + nccl);
}

TrainerInfo parseTrainerVersion(const QString& path, const QString& versionText)
{
    namespace words = protocol::trainer_version;
    TrainerInfo info;
    info.path = path;
    for (const QString& line : versionText.split(QLatin1Char('\n'))) {
        const QString trimmed = line.trimmed();
        if (trimmed.startsWith(QLatin1String(words::kLibTorchPrefix))) info.libtorch = trimmed.mid(int(sizeof words::kLibTorchPrefix) - 1);
        else if (trimmed.startsWith(QLatin1String(words::kCudaPrefix))) info.cuda = compiledIn(trimmed.mid(int(sizeof words::kCudaPrefix) - 1));
        else if (trimmed.startsWith(QLatin1String(words::kNcclPrefix))) info.nccl = compiledIn(trimmed.mid(int(sizeof words::kNcclPrefix) - 1));
    }
    if (info.libtorch.isEmpty()) {
        info.error = QStringLiteral("%1 --version did not name its LibTorch: is it a ringmaster-trainer?").arg(path);
    }
    return info;
}

TrainerInfo describeTrainer(const QString& path, const std::atomic_bool* cancelled)
{
    const CheckRun run = runCheck(path, {QStringLiteral("--version")}, path + QStringLiteral(" --version"), kVersionTimeoutMs,
                                  cancelled);
    if (!run.failure.isEmpty() || run.exitCode != 0) {
        TrainerInfo info;
        info.path = path;
        const QString said = run.standardError.section(QLatin1Char('\n'), -1).trimmed();
        info.error = !run.failure.isEmpty() ? run.failure
                                            : QStringLiteral("%1 --version failed (exit %2%3)")
                                                  .arg(path).arg(run.exitCode)
                                                  .arg(said.isEmpty() ? QString() : QStringLiteral(": ") + said);
        return info;
    }
    return parseTrainerVersion(path, run.standardOutput);
}

QString userTrainerPath()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation) + QStringLiteral("/ringmaster/bin/") +
           QLatin1String(kTrainerProgramName);
}

QString foundTrainerLine()
{
    const QString path = locateTrainer(JobSpec{});
    if (path.isEmpty()) return QStringLiteral("Trainer: ringmaster-trainer not found");
    const TrainerInfo trainer = describeTrainer(path);
    return QStringLiteral("Trainer: %1 (%2)").arg(path, trainer.summary());
}

QString trainerWithoutCudaMessage(const TrainerInfo& trainer)
{
    return QStringLiteral("%1 has no CUDA (%2), but this job runs on GPUs: build a GPU trainer against your CUDA PyTorch "
                          "with ringmaster-build-trainer --python PATH (scripts/build-trainer.sh in a checkout), or "
                          "run on --device cpu")
        .arg(trainer.path, trainer.summary());
}

} // namespace ringmaster::supervisor
