// ringmaster-runs: list, export, bundle and plot run directories (see cli/runs_command.h). Only `plot`
// draws, so only it gets a QApplication (on the offscreen platform: it never opens a window); the other
// subcommands stay on a QCoreApplication and start fast.
#include <QApplication>
#include <QCoreApplication>
#include <QTextStream>

#include <cstdio>
#include <cstring>
#include <memory>

#include "ui/charts/run_plot.h"
#include "cli/runs_command.h"
#include "cli/runs_plot_command.h"
#include "cli/version_text.h"

int main(int argc, char** argv)
{
    if (ringmaster::cli::isVersionRequest(argc, argv)) return ringmaster::cli::printVersion("ringmaster-runs");
    const bool plot = argc > 1 && std::strcmp(argv[1], ringmaster::cli::kPlotCommand) == 0;
    std::unique_ptr<QCoreApplication> app;
    if (plot) {
        ringmaster::ui::prepareHeadlessPlot();
        app = std::make_unique<QApplication>(argc, argv);
    } else {
        app = std::make_unique<QCoreApplication>(argc, argv);
    }
    QCoreApplication::setApplicationName(QStringLiteral("ringmaster-runs"));
    QTextStream out(stdout), err(stderr);
    return ringmaster::cli::runRunsCommand(QCoreApplication::arguments().mid(1), out, err, ringmaster::cli::runsPlotCommand);
}
