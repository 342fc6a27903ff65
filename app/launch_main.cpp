// ringmaster-launch: the headless launcher (see core/supervisor/launch_command.h).
#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>

#include "cli/launch_command.h"
#include "cli/slurm_flags.h"
#include "cli/test_metric_pattern.h"
#include "supervisor/trainer_info.h"
#include "cli/version_text.h"

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    // With the trainer it would run (its own --version: LibTorch, CUDA, NCCL).
    if (ringmaster::cli::isVersionRequest(argc, argv)) {
        return ringmaster::cli::printVersion("ringmaster-launch", ringmaster::supervisor::foundTrainerLine());
    }
    QCoreApplication::setApplicationName(QStringLiteral("ringmaster-launch"));
    using namespace ringmaster::supervisor;
    // --test-metric-pattern: reads lines from stdin and prints the scalars they would give; no run.
    if (const QStringList arguments = QCoreApplication::arguments().mid(1); ringmaster::cli::isTestMetricPatternRequest(arguments)) {
        QTextStream in(stdin), out(stdout), err(stderr);
        return ringmaster::cli::runTestMetricPattern(arguments, in, out, err);
    }
    JobSpec job;
    bool quiet = false;
    QString attachDir;
    NotifyProgram notify;
    try {
        QStringList arguments = QCoreApplication::arguments();
        notify = takeNotifyCommand(&arguments); // a launch's and an --attach's
        if (parseAttachArguments(arguments, &attachDir, &quiet)) {
            LaunchCommand command(job, quiet);
            command.setAttach(attachDir);
            command.setNotifyCommand(notify);
            return command.exec();
        }
        if (!parseLaunchArguments(arguments, &job, &quiet)) return kLaunchExitCompleted;
    } catch (const JobError& e) {
        std::fprintf(stderr, "ringmaster-launch: error: %s\n", e.what());
        return kLaunchExitUsage;
    }
    LaunchCommand command(job, quiet);
    command.setNotifyCommand(notify);
    return command.exec();
}
