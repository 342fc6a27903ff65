// ringmaster: the desktop app (see ui/main_window.h).
//   ringmaster [JOB.json] [--start]
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>
#include <QMessageBox>

#include "job_spec.h"
#include "main_window.h"
#include "version_text.h"

int main(int argc, char** argv)
{
    // Before QApplication: --version needs no display.
    if (ringmaster::cli::isVersionRequest(argc, argv)) return ringmaster::cli::printVersion("ringmaster");
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("ringmaster"));
    QApplication::setOrganizationName(QStringLiteral("Ringmaster"));
    QIcon icon; // the same PNGs as the package's hicolor icons (resources/icon)
    for (int size : {16, 22, 24, 32, 48, 64, 128, 256}) icon.addFile(QStringLiteral(":/icons/%1/ringmaster.png").arg(size));
    QApplication::setWindowIcon(icon);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Launch and watch data-parallel training runs."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("job"), QStringLiteral("A job file to load (default: the last job)."));
    const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Start the job at once."));
    parser.addOption(start);
    // Answered above, before QApplication; here so that --help lists it.
    parser.addOption(QCommandLineOption(QStringLiteral("version"), QStringLiteral("Print the Ringmaster, Qt and LibTorch versions and exit.")));
    parser.process(app);

    ringmaster::ui::MainWindow window;
    window.restoreLastJob();
    if (!parser.positionalArguments().isEmpty()) {
        try {
            window.loadJob(ringmaster::supervisor::JobSpec::load(parser.positionalArguments().first()));
        } catch (const ringmaster::supervisor::JobError& e) {
            QMessageBox::critical(nullptr, QStringLiteral("Ringmaster"), e.message());
            return 2;
        }
    }
    window.show();
    if (parser.isSet(start)) window.startWhenFormChecked();
    return QApplication::exec();
}
