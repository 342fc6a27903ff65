// ringmaster-runs: list, export and bundle run directories (see cli/runs_command.h).
#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>

#include "runs_command.h"

int main(int argc, char** argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("ringmaster-runs"));
    QTextStream out(stdout), err(stderr);
    return ringmaster::cli::runRunsCommand(QCoreApplication::arguments().mid(1), out, err);
}
