#include "cli/runs_plot_command.h"

#include <QApplication>
#include <QSet>

#include "runs/run_files.h"
#include "ui/charts/run_plot.h"
#include "cli/runs_command.h"
#include "cli/runs_default_root.h"
#include "cli/runs_flags.h"
#include "runs/scalar_table.h"

namespace ringmaster::cli {
namespace {

using runs::RunsError;

// A picture smaller than this has no room for a panel's axes; larger ones are not pictures any more.
constexpr int kMinPlotSide = 200;
constexpr int kMaxPlotSide = 10000;

QSize parseSize(const QString& text)
{
    if (text.isEmpty()) return {ui::RunPlotOptions::kDefaultWidth, ui::RunPlotOptions::kDefaultHeight};
    const QStringList parts = text.split(QLatin1Char(','));
    bool widthOk = false, heightOk = false;
    const int width = parts.size() == 2 ? parts[0].trimmed().toInt(&widthOk) : 0;
    const int height = parts.size() == 2 ? parts[1].trimmed().toInt(&heightOk) : 0;
    if (!widthOk || !heightOk || width < kMinPlotSide || height < kMinPlotSide || width > kMaxPlotSide || height > kMaxPlotSide) {
        throw RunsError(QStringLiteral("--size %1: expected WIDTH,HEIGHT in pixels, each %2 to %3, e.g. --size %4,%5")
                            .arg(text).arg(kMinPlotSide).arg(kMaxPlotSide)
                            .arg(ui::RunPlotOptions::kDefaultWidth).arg(ui::RunPlotOptions::kDefaultHeight));
    }
    return {width, height};
}

double parseSmoothing(const QString& text)
{
    if (text.isEmpty()) return ui::ScalarChart::kDefaultSmoothing;
    bool ok = false;
    const double weight = text.toDouble(&ok);
    if (!ok || !(weight >= 0.0 && weight <= ui::DebiasedEma::kMaxWeight)) {
        throw RunsError(QStringLiteral("--smoothing %1: expected a number from 0 (no smoothing) to %2, e.g. --smoothing %3")
                            .arg(text).arg(ui::DebiasedEma::kMaxWeight).arg(ui::ScalarChart::kDefaultSmoothing));
    }
    return weight;
}

ui::ScalarChart::XAxis parseXAxis(const QString& text)
{
    if (text.isEmpty() || text == QLatin1String("step")) return ui::ScalarChart::XAxis::Step;
    if (text == QLatin1String("time")) return ui::ScalarChart::XAxis::WallTime;
    throw RunsError(QStringLiteral("--x %1: expected step or time (seconds since each run's first value)").arg(text));
}

// The names in the records, in order of first appearance.
QStringList namesOf(const QList<runs::ScalarRecord>& records)
{
    QStringList names;
    QSet<QString> seen;
    for (const auto& record : records) {
        if (!seen.contains(record.name)) {
            seen.insert(record.name);
            names << record.name;
        }
    }
    return names;
}

// The names given with --metric (each checked), or the chart's default: loss, else the first name.
QStringList chooseMetrics(const QStringList& requested, const QStringList& available)
{
    if (requested.isEmpty()) return {available.contains(ui::ScalarChart::kDefaultName) ? ui::ScalarChart::kDefaultName : available.first()};
    QStringList sorted = available;
    sorted.sort();
    for (const QString& name : requested) {
        if (!available.contains(name)) {
            throw RunsError(QStringLiteral("--metric %1: no run given has it: choose from %2").arg(name, sorted.join(QStringLiteral(", "))));
        }
    }
    return requested;
}

} // namespace

int runsPlotCommand(const QStringList& arguments, QTextStream& out, QTextStream& err)
{
    if (qobject_cast<QApplication*>(QCoreApplication::instance()) == nullptr) {
        throw RunsError(QStringLiteral("plot needs a QApplication: run it through ringmaster-runs"));
    }
    const ParsedFlags parsed = parseFlags(QString::fromLatin1(kPlotCommand), arguments,
                                          {QStringLiteral("--out"), QStringLiteral("--metric"), QStringLiteral("--x"),
                                           QStringLiteral("--smoothing"), QStringLiteral("--size")},
                                          {});
    if (parsed.positional.isEmpty()) throw RunsError(QStringLiteral("plot: give at least one run directory, e.g. plot runs/20261130-101500-cnn --out loss.png"));
    const QString outPath = singleValue(parsed, QStringLiteral("--out"));
    if (outPath.isEmpty()) throw RunsError(QStringLiteral("plot: give the picture to write with --out FILE.png (or .svg, .pdf)"));
    if (!ui::plotFormatOf(outPath)) throw RunsError(QStringLiteral("--out %1: unknown picture format: name it FILE.png, FILE.svg or FILE.pdf").arg(outPath));
    ui::RunPlotOptions options;
    options.xAxis = parseXAxis(singleValue(parsed, QStringLiteral("--x")));
    options.smoothing = parseSmoothing(singleValue(parsed, QStringLiteral("--smoothing")));
    options.size = parseSize(singleValue(parsed, QStringLiteral("--size")));
    const QStringList runDirs = resolveRunArguments(parsed.positional);
    for (const QString& run : runDirs) runs::requireRunDirectory(run); // all checked before anything is read

    QList<runs::ScalarRecord> records;
    for (const QString& run : runDirs) {
        runs::ScalarTable table = runs::readRunScalars(run, runs::kChartPointsPerSeries);
        for (const QString& problem : table.problems) err << kRunsProgram << ": warning: " << run << ": " << problem << " (left out)\n";
        records += table.records;
    }
    const QStringList available = namesOf(records);
    if (available.isEmpty()) throw RunsError(QStringLiteral("plot: the runs given have no scalars yet: nothing to draw"));
    options.metrics = chooseMetrics(parsed.values.value(QStringLiteral("--metric")), available);

    const ui::RunPlotResult result = ui::writeRunPlot(records, outPath, options);
    if (result.pointsWithoutWallTime > 0) {
        err << kRunsProgram << ": warning: " << result.pointsWithoutWallTime
            << " values without a wall time were left out of the time axis (use --x step to draw them)\n";
    }
    out << "wrote " << outPath << " (" << options.metrics.join(QStringLiteral(", ")) << " of " << parsed.positional.size()
        << (parsed.positional.size() == 1 ? " run" : " runs") << ", " << options.size.width() << 'x' << options.size.height() << ")\n";
    return kRunsExitOk;
}

} // namespace ringmaster::cli
