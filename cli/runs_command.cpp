#include "cli/runs_command.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>

#include "runs/run_bundle.h"
#include "runs/run_files.h"
#include "runs/run_listing.h"
#include "cli/runs_default_root.h"
#include "cli/runs_flags.h"
#include "cli/runs_slurm_status.h"
#include "cli/runs_table.h"
#include "runs/scalar_export.h"
#include "runs/system_table.h"
#include "runs/scalar_table.h"

namespace ringmaster::cli {
namespace {

using runs::RunsError;

constexpr const char* kProgram = kRunsProgram;

int listCommand(const QStringList& arguments, QTextStream& out)
{
    const ParsedFlags parsed = parseFlags(QStringLiteral("list"), arguments, {QStringLiteral("--root")}, {QStringLiteral("--json")});
    if (!parsed.positional.isEmpty()) {
        throw RunsError(QStringLiteral("list %1: unexpected argument: give folders of runs with --root DIR").arg(parsed.positional.first()));
    }
    QStringList roots = parsed.values.value(QStringLiteral("--root"));
    if (roots.isEmpty()) {
        const DefaultRunsRoot root = defaultRunsRoot();
        if (!QDir(root.path).exists()) {
            throw RunsError(QStringLiteral("no folder \"%1\" (%2): give the folder your runs are in with --root DIR").arg(root.path, root.origin));
        }
        roots << root.path;
    }
    auto runs = runs::listRuns(roots);
    applySlurmStates(&runs);   // runs Slurm may still run: queued or running
    if (parsed.switches.contains(QStringLiteral("--json"))) {
        QJsonArray array;
        for (const auto& run : runs) array.append(run.toJson());
        out << QString::fromUtf8(QJsonDocument(array).toJson(QJsonDocument::Indented));
    } else {
        out << formatRunTable(runs);
    }
    return kRunsExitOk;
}

int exportCommand(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    const ParsedFlags parsed = parseFlags(QStringLiteral("export"), arguments, {QStringLiteral("--out"), QStringLiteral("--format")}, {});
    if (parsed.positional.isEmpty()) throw RunsError(QStringLiteral("export: give at least one run directory, e.g. export runs/20261130-101500-cnn --out scalars.csv"));
    const QString outPath = singleValue(parsed, QStringLiteral("--out"));
    if (outPath.isEmpty()) throw RunsError(QStringLiteral("export: give the output file with --out FILE"));
    const QString formatName = singleValue(parsed, QStringLiteral("--format"));
    runs::ExportFormat format = runs::ExportFormat::Csv;
    if (formatName == QLatin1String("json")) {
        format = runs::ExportFormat::Json;
    } else if (!formatName.isEmpty() && formatName != QLatin1String("csv")) {
        throw RunsError(QStringLiteral("--format %1: expected csv or json").arg(formatName));
    }
    const QStringList runDirs = resolveRunArguments(parsed.positional);
    for (const QString& run : runDirs) runs::requireRunDirectory(run);   // all checked before anything is written

    QList<runs::ScalarRecord> records;
    for (const QString& run : runDirs) {
        for (const runs::ScalarTable& table : {runs::readRunScalars(run), runs::readRunSystem(run)}) {
            for (const QString& problem : table.problems) err << kProgram << ": warning: " << run << ": " << problem << " (left out)\n";
            records += table.records;
        }
    }
    runs::writeScalars(records, outPath, format);
    out << "wrote " << records.size() << " scalars of " << parsed.positional.size() << (parsed.positional.size() == 1 ? " run" : " runs")
        << " to " << outPath << '\n';
    return kRunsExitOk;
}

int bundleCommand(const QStringList& arguments, QTextStream& out)
{
    const ParsedFlags parsed = parseFlags(QStringLiteral("bundle"), arguments, {QStringLiteral("--out")},
                                     {QStringLiteral("--with-checkpoints"), QStringLiteral("--with-model")});
    if (parsed.positional.isEmpty()) throw RunsError(QStringLiteral("bundle: give a run directory, e.g. bundle runs/20261130-101500-cnn --out run.tar.gz"));
    if (parsed.positional.size() > 1) throw RunsError(QStringLiteral("bundle: give one run directory (got %1): bundle each run on its own").arg(parsed.positional.size()));
    const QString outPath = singleValue(parsed, QStringLiteral("--out"));
    if (outPath.isEmpty()) throw RunsError(QStringLiteral("bundle: give the archive with --out FILE.tar.gz"));
    if (!outPath.endsWith(QStringLiteral(".tar.gz")) && !outPath.endsWith(QStringLiteral(".tgz"))) {
        throw RunsError(QStringLiteral("--out %1: a bundle is a gzip-compressed tar: name it FILE.tar.gz").arg(outPath));
    }
    runs::BundleOptions options;
    options.withCheckpoints = parsed.switches.contains(QStringLiteral("--with-checkpoints"));
    options.withModel = parsed.switches.contains(QStringLiteral("--with-model"));
    const auto result = runs::writeRunBundle(resolveRunArguments(parsed.positional).first(), outPath, options);
    out << "wrote " << outPath << " (" << result.files << " files, " << result.bytes << " bytes)\n";
    return kRunsExitOk;
}

} // namespace

QString runsUsage()
{
    return QStringLiteral(
        "usage: ringmaster-runs COMMAND [flags]\n"
        "  list [--root DIR]... [--json]\n"
        "      every run directory under the roots: name, start time, status, kind (trainer or script),\n"
        "      model, world size, steps, final loss, best validation accuracy, duration, and what is damaged.\n"
        "      A run Slurm still has is \"queued\" or \"running\" (Slurm is asked about those runs only).\n"
        "      --root DIR   a folder of runs (the launcher's --output-root); repeat for several. Default: the\n"
        "                   configured output root: the output folder of the last job the app started (from\n"
        "                   ~/.config/Ringmaster/ringmaster.conf), else runs (the launcher's default)\n"
        "      --json       one JSON array, an object per run\n"
        "  RUN (export, bundle, plot): a run directory, or the name of one in the configured output root\n"
        "  export RUN... --out FILE [--format csv|json]\n"
        "      every scalar of the runs in one table: run,step,wall_time,name,value (full precision)\n"
        "      --out FILE   the file to write (replaced atomically)\n"
        "      --format csv|json   the table's format (default csv)\n"
        "  bundle RUN --out FILE.tar.gz [--with-checkpoints] [--with-model]\n"
        "      the run's job, summary, metrics, logs and classes, byte for byte, plus environment.json\n"
        "      --with-checkpoints   add checkpoints/\n"
        "      --with-model         add model.pt\n"
        "  plot RUN... --out FILE.png|.svg|.pdf [--metric NAME]... [--x step|time] [--smoothing F] [--size W,H]\n"
        "      the app's scalar chart of the runs, overlaid with a legend (run · name), drawn without a window\n"
        "      --out FILE       the picture; its extension picks PNG, SVG or PDF (replaced atomically)\n"
        "      --metric NAME    a scalar to draw; repeat for several (default: loss, else the first name)\n"
        "      --x step|time    the x axis: step (default) or seconds since each run's first value\n"
        "      --smoothing F    the smoothed lines' EMA weight, 0 (none) to 0.999 (default 0.6, as in the app)\n"
        "      --size W,H       the picture's size in pixels (default 1200,800; PDF: 96 per inch)\n"
        "  --help, --version\n"
        "\n"
        "Exit status:\n"
        "  0  done\n"
        "  2  bad input (a folder that is not a run, a bad flag, an unwritable output): nothing was written\n"
        "\n"
        "Files:\n"
        "  RUN_DIR/.ringmaster-index.json   what list read from the run, rebuilt when its files change\n"
        "  ROOT/.ringmaster-runs-index.json the index of a folder of runs, beside them\n");
}

int runRunsCommand(const QStringList& arguments, QTextStream& out, QTextStream& err, const RunsSubcommand& plot)
{
    if (arguments.isEmpty()) {
        err << kProgram << ": error: give a command (list, export, bundle, plot): see " << kProgram << " --help\n";
        return kRunsExitUsage;
    }
    const QString command = arguments.first();
    const QStringList rest = arguments.mid(1);
    if (command == QLatin1String("--help") || command == QLatin1String("-h") || command == QLatin1String("help") ||
        rest.contains(QStringLiteral("--help"))) {
        out << runsUsage();
        return kRunsExitOk;
    }
    try {
        if (command == QLatin1String("list")) return listCommand(rest, out);
        if (command == QLatin1String("export")) return exportCommand(rest, out, err);
        if (command == QLatin1String("bundle")) return bundleCommand(rest, out);
        if (command == QLatin1String("plot")) {
            if (!plot) throw RunsError(QStringLiteral("plot is not built into this program: use ringmaster-runs, or export the scalars and plot them elsewhere"));
            return plot(rest, out, err);
        }
        throw RunsError(QStringLiteral("%1: unknown command: use list, export, bundle or plot (see %2 --help)").arg(command, QString::fromLatin1(kProgram)));
    } catch (const RunsError& e) {
        err << kProgram << ": error: " << e.message() << '\n';
        return kRunsExitUsage;
    }
}

} // namespace ringmaster::cli
