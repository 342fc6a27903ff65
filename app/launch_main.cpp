// ringmaster-launch: the headless launcher (see core/supervisor/launch_command.h).
#include <QCoreApplication>

#include <cstdio>

#include "launch_command.h"

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("ringmaster-launch"));
    using namespace ringmaster::supervisor;
    JobSpec job;
    bool quiet = false;
    try {
        if (!parseLaunchArguments(QCoreApplication::arguments(), &job, &quiet)) return kLaunchExitCompleted;
    } catch (const JobError& e) {
        std::fprintf(stderr, "ringmaster-launch: error: %s\n", e.what());
        return kLaunchExitUsage;
    }
    LaunchCommand command(job, quiet);
    return command.exec();
}
