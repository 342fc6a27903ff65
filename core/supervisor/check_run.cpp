#include "supervisor/check_run.h"

#include <QElapsedTimer>
#include <QProcess>

namespace ringmaster::supervisor {
namespace {

constexpr int kCancelPollMs = 100;

} // namespace

CheckRun runCheck(const QString& program, const QStringList& arguments, const QString& what, int timeoutMs,
                  const std::atomic_bool* cancelled, const QProcessEnvironment& extra)
{
    QProcess process;
    process.setProgram(program);
    process.setArguments(arguments);
    process.setStandardInputFile(QProcess::nullDevice());
    auto environment = QProcessEnvironment::systemEnvironment();
    for (const char* name : {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "SLURM_PROCID",
                             "SLURM_LOCALID", "SLURM_NTASKS", "RINGMASTER_SOCKET", "RINGMASTER_TOKEN"}) {
        environment.remove(QString::fromLatin1(name));
    }
    environment.insert(extra);
    process.setProcessEnvironment(environment);
    process.start();
    CheckRun result;
    QElapsedTimer clock;
    clock.start();
    while (!process.waitForFinished(kCancelPollMs)) {
        const bool cancel = cancelled && cancelled->load();
        if (!cancel && clock.elapsed() < timeoutMs && process.state() != QProcess::NotRunning) continue;
        if (process.state() == QProcess::NotRunning) break; // it failed to start
        process.kill();
        process.waitForFinished();
        result.failure = cancel ? QStringLiteral("cancelled") : QStringLiteral("%1 did not answer in %2 s").arg(what).arg(timeoutMs / 1000);
        return result;
    }
    if (process.error() == QProcess::FailedToStart) {
        result.failure = QStringLiteral("cannot run %1: %2").arg(program, process.errorString());
    } else if (process.exitStatus() == QProcess::CrashExit) {
        // Ctrl-C at a terminal reaches the check too (it is in the terminal's group).
        result.failure = QStringLiteral("%1 was interrupted (signal %2)").arg(what).arg(process.exitCode());
    }
    result.exitCode = process.exitCode();
    result.standardOutput = QString::fromUtf8(process.readAllStandardOutput()).trimmed();
    result.standardError = QString::fromUtf8(process.readAllStandardError()).trimmed();
    return result;
}

} // namespace ringmaster::supervisor
