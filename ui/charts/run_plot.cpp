#include "ui/charts/run_plot.h"

#include <QFileInfo>
#include <QImage>
#include <QPageLayout>
#include <QPageSize>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <cmath>

#include "qcustomplot.h"
#include "runs/run_files.h"

namespace ringmaster::ui {
namespace {

using runs::RunsError;

// Device pixels per inch of every format, so a PDF or SVG of W,H looks like the PNG of W,H.
constexpr int kPlotDotsPerInch = 96;
constexpr double kPointsPerInch = 72.0;
constexpr const char* kPlotTitle = "ringmaster-runs plot";
constexpr const char* kRuntimeDirNotice = "QStandardPaths: XDG_RUNTIME_DIR not set";

// Paints the chart's panels stacked top to bottom, each the full width and an equal share of the height.
void paintPanels(const ScalarChart& chart, QPaintDevice* device, const QSize& size, bool vectorized)
{
    QCPPainter painter(device);
    if (vectorized) painter.setMode(QCPPainter::pmVectorized);
    painter.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    const QStringList titles = chart.panelTitles();
    for (int i = 0; i < titles.size(); ++i) {
        const int top = size.height() * i / titles.size();
        const int bottom = size.height() * (i + 1) / titles.size();
        painter.save();
        painter.translate(0, top);
        chart.panelPlot(titles[i])->toPainter(&painter, size.width(), bottom - top);
        painter.restore();
    }
    painter.end();
}

void writeImage(const ScalarChart& chart, QSaveFile* file, const QSize& size)
{
    QImage image(size, QImage::Format_ARGB32);
    image.setDotsPerMeterX(static_cast<int>(std::lround(kPlotDotsPerInch / 0.0254)));
    image.setDotsPerMeterY(image.dotsPerMeterX());
    paintPanels(chart, &image, size, false);
    if (!image.save(file, "PNG")) throw RunsError(QStringLiteral("--out %1: the PNG could not be encoded").arg(file->fileName()));
}

void writeSvg(const ScalarChart& chart, QSaveFile* file, const QSize& size)
{
    QSvgGenerator svg;
    svg.setOutputDevice(file);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setResolution(kPlotDotsPerInch);
    svg.setTitle(QString::fromLatin1(kPlotTitle));
    paintPanels(chart, &svg, size, true);
}

void writePdf(const ScalarChart& chart, QSaveFile* file, const QSize& size)
{
    QPdfWriter pdf(file);
    pdf.setResolution(kPlotDotsPerInch);
    pdf.setTitle(QString::fromLatin1(kPlotTitle));
    pdf.setCreator(QString::fromLatin1(kPlotTitle));
    const QSizeF points = QSizeF(size) * (kPointsPerInch / kPlotDotsPerInch);
    pdf.setPageLayout(QPageLayout(QPageSize(points, QPageSize::Point, QString(), QPageSize::ExactMatch), QPageLayout::Portrait,
                                  QMarginsF(0, 0, 0, 0)));
    paintPanels(chart, &pdf, size, true);
}

} // namespace

std::optional<PlotFormat> plotFormatOf(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png")) return PlotFormat::Png;
    if (suffix == QLatin1String("svg")) return PlotFormat::Svg;
    if (suffix == QLatin1String("pdf")) return PlotFormat::Pdf;
    return std::nullopt;
}

void prepareHeadlessPlot()
{
    if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    static QtMessageHandler previous = nullptr;
    previous = qInstallMessageHandler([](QtMsgType type, const QMessageLogContext& context, const QString& message) {
        if (message.startsWith(QLatin1String(kRuntimeDirNotice))) return;
        if (previous != nullptr) previous(type, context, message);
    });
}

RunPlotResult writeRunPlot(const QList<runs::ScalarRecord>& records, const QString& path, const RunPlotOptions& options)
{
    const auto format = plotFormatOf(path);
    if (!format) throw RunsError(QStringLiteral("--out %1: unknown picture format: name it FILE.png, FILE.svg or FILE.pdf").arg(path));

    RunPlotResult result;
    ScalarChart chart;
    chart.resize(options.size);
    const bool wallTimeAxis = options.xAxis == ScalarChart::XAxis::WallTime;
    for (const auto& record : records) {
        if (wallTimeAxis && !record.wallTime) {
            ++result.pointsWithoutWallTime;
            continue;
        }
        chart.appendPoint(record.run, record.name, record.step, record.wallTime.value_or(0.0), record.value);
    }
    chart.flush();
    if (!options.metrics.isEmpty()) {
        for (const QString& name : options.metrics) chart.setTicked(name, true);
        for (const QString& name : chart.names()) {
            if (!options.metrics.contains(name)) chart.setTicked(name, false);
        }
    }
    chart.setXAxis(options.xAxis);
    chart.setSmoothing(options.smoothing);
    chart.fit();
    result.panels = chart.panelTitles();
    if (result.panels.isEmpty()) throw RunsError(QStringLiteral("nothing to draw: the runs have no values of %1").arg(options.metrics.join(QStringLiteral(", "))));

    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly)) {
        throw RunsError(QStringLiteral("--out %1: cannot write it (%2): give a file in a folder you can write to").arg(path, file.errorString()));
    }
    switch (*format) {
    case PlotFormat::Png: writeImage(chart, &file, options.size); break;
    case PlotFormat::Svg: writeSvg(chart, &file, options.size); break;
    case PlotFormat::Pdf: writePdf(chart, &file, options.size); break;
    }
    if (!file.commit()) throw RunsError(QStringLiteral("--out %1: cannot write it (%2): give a file in a folder you can write to").arg(path, file.errorString()));
    return result;
}

} // namespace ringmaster::ui
