// ringmaster: the desktop app (see ui/main_window.h).
//   ringmaster [JOB.json] [--start]
// JOB.json is any job file; the desktop entry passes the *.ringmaster.json files it opens
// (packaging/ringmaster.desktop, MIME type application/x-ringmaster-job).
#include <QApplication>
#include <QCommandLineParser>
#include <QIcon>

#include <cstdio>
#include <cstring>

#include "supervisor/app_settings.h"
#include "ui/main_window.h"
#include "supervisor/trainer_info.h"
#include "cli/version_text.h"

namespace {

// The app's options and its one argument; `start` is the --start option it adds.
void describeCommandLine(QCommandLineParser& parser, const QCommandLineOption& start)
{
    parser.setApplicationDescription(QStringLiteral("Launch and watch data-parallel training runs."));
    parser.addHelpOption();
    parser.addPositionalArgument(QStringLiteral("job"), QStringLiteral("A job file to load, e.g. job.ringmaster.json (default: the last job)."));
    parser.addOption(start);
    // Answered before QApplication; here so that --help lists it.
    parser.addOption(QCommandLineOption(QStringLiteral("version"), QStringLiteral("Print the Ringmaster, Qt and LibTorch versions and exit.")));
}

bool isHelpRequest(int argc, char** argv)
{
    return argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "-?") == 0);
}

} // namespace

int main(int argc, char** argv)
{
    const QCommandLineOption start(QStringLiteral("start"), QStringLiteral("Start the job at once."));
    // Before QApplication, which needs a display: --version (a QCoreApplication locates the trainer it names) and
    // --help answer in an SSH session too (--help-all, which lists Qt's own options, needs the GUI application).
    if (ringmaster::cli::isVersionRequest(argc, argv)) {
        const QCoreApplication core(argc, argv);
        return ringmaster::cli::printVersion("ringmaster", ringmaster::supervisor::foundTrainerLine());
    }
    if (isHelpRequest(argc, argv)) {
        const QCoreApplication core(argc, argv);
        QCommandLineParser parser;
        describeCommandLine(parser, start);
        std::fputs(parser.helpText().toLocal8Bit().constData(), stdout);
        std::fputs("\nExit status:\n"
                   "  0  the window was closed\n"
                   "  2  no display, or with --start a job file that is not valid (named on standard error)\n",
                   stdout);
        return 0;
    }
    // Without any display Qt aborts with a paragraph about platform plugins: say it in one line instead.
    if (qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
        qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) {
        std::fputs("ringmaster: error: no display (DISPLAY and WAYLAND_DISPLAY are not set): start it in a desktop "
                   "session or with ssh -X, or run ringmaster-launch in this terminal\n", stderr);
        return 2;
    }
    QApplication app(argc, argv);
    // The names its QSettings are kept under, which ringmaster-runs reads too (app_settings.h).
    QApplication::setApplicationName(QString::fromLatin1(ringmaster::supervisor::kSettingsApplication));
    QApplication::setOrganizationName(QString::fromLatin1(ringmaster::supervisor::kSettingsOrganization));
    QIcon icon; // the same PNGs as the package's hicolor icons (resources/icon)
    for (int size : {16, 22, 24, 32, 48, 64, 128, 256}) icon.addFile(QStringLiteral(":/icons/%1/ringmaster.png").arg(size));
    QApplication::setWindowIcon(icon);
    QCommandLineParser parser;
    describeCommandLine(parser, start);
    parser.process(app);

    ringmaster::ui::MainWindow window;
    window.restoreLastJob();
    if (!parser.positionalArguments().isEmpty()) {
        // A bad file: one line on stderr; the window opens with the reason in its banner and the last job in
        // the form, except with --start, which must not start another job than the one named: exit 2.
        QString error;
        if (!window.openJobFile(parser.positionalArguments().first(), &error)) {
            std::fprintf(stderr, "ringmaster: error: %s\n", qUtf8Printable(error));
            if (parser.isSet(start)) return 2;
        }
    }
    window.show();
    if (parser.isSet(start)) window.startWhenFormChecked();
    return QApplication::exec();
}
