#pragma once
// `ringmaster-runs plot`'s drawing: the records of one or more runs (core/runs' ScalarRecord, the rows
// `export` writes) drawn by the GUI's own ScalarChart (panels by name prefix, raw and debiased-EMA
// smoothed lines, runs overlaid with a legend "run · name"), then painted into a PNG, SVG or PDF file
// instead of a window. Needs a QApplication (widgets), which may run on the offscreen platform
// (useOffscreenPlatformUnlessChosen). The file is written atomically (QSaveFile): it appears complete
// or not at all.

#include <QList>
#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

#include "ui/charts/scalar_chart.h"
#include "runs/scalar_table.h"

namespace ringmaster::ui {

enum class PlotFormat { Png, Svg, Pdf };

struct RunPlotOptions
{
    static constexpr int kDefaultWidth = 1200;
    static constexpr int kDefaultHeight = 800;

    QStringList metrics;                       // the names to draw (ticked in the chart); none: the chart's default
    ScalarChart::XAxis xAxis = ScalarChart::XAxis::Step;
    double smoothing = ScalarChart::kDefaultSmoothing;
    QSize size{kDefaultWidth, kDefaultHeight}; // pixels (PDF: points at 96 per inch, so it matches the PNG)
};

struct RunPlotResult
{
    QStringList panels;            // the panels drawn, top to bottom
    int pointsWithoutWallTime = 0; // records left out of a wall-time axis because their run did not record one
};

// The format named by PATH's extension (.png, .svg, .pdf, any case); nothing for any other.
std::optional<PlotFormat> plotFormatOf(const QString& path);
// Sets QT_QPA_PLATFORM=offscreen unless the user chose a platform: the plot never opens a window, so it
// needs no display (and a stale DISPLAY cannot abort it). Also silences Qt's "XDG_RUNTIME_DIR not set"
// notice, which the offscreen platform prints on every headless machine and which concerns nothing it
// uses. Call before constructing the QApplication.
void prepareHeadlessPlot();
// Draws RECORDS and writes PATH (its format from the extension). Throws runs::RunsError naming the file
// and the fix when it cannot be written; nothing is left behind then.
RunPlotResult writeRunPlot(const QList<runs::ScalarRecord>& records, const QString& path, const RunPlotOptions& options);

} // namespace ringmaster::ui
