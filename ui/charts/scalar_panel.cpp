#include "ui/charts/scalar_panel.h"

#include <algorithm>
#include <cmath>

#include "qcustomplot.h"

namespace ringmaster::ui {
namespace {

constexpr int kPanelMinHeight = 200;
constexpr int kRawAlpha = 60;
constexpr double kRangePadding = 0.05;
constexpr double kLogRangeFactor = 1.1;
// A fixed left margin (room for tick labels like "0.0001" or "250000"), so the stacked panels' x axes line up.
constexpr int kValueAxisMargin = 64;
// Tableau's ten colours (matplotlib's default cycle), one per series of a panel.
const QColor kPalette[] = {{31, 119, 180}, {255, 127, 14}, {44, 160, 44}, {214, 39, 40}, {148, 103, 189},
                           {140, 86, 75},  {227, 119, 194}, {127, 127, 127}, {188, 189, 34}, {23, 190, 207}};
constexpr int kPaletteSize = static_cast<int>(sizeof(kPalette) / sizeof(kPalette[0]));

} // namespace

QCustomPlot* createScalarPanel(QWidget* parent, const QString& title, const QString& xLabel, bool logScale)
{
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumHeight(kPanelMinHeight);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->axisRect()->setRangeDrag(Qt::Horizontal | Qt::Vertical);
    plot->axisRect()->setRangeZoom(Qt::Horizontal | Qt::Vertical);
    plot->setNoAntialiasingOnDrag(true);
    plot->setPlottingHints(QCP::phCacheLabels | QCP::phFastPolylines);
    plot->plotLayout()->insertRow(0);
    QFont titleFont = plot->font();
    titleFont.setBold(true);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, titleFont));
    plot->legend->setVisible(true);
    plot->legend->setBrush(QColor(255, 255, 255, 200));
    plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    plot->axisRect()->setAutoMargins(QCP::msRight | QCP::msTop | QCP::msBottom);
    plot->axisRect()->setMargins(QMargins(kValueAxisMargin, 0, 0, 0));
    plot->xAxis->setLabel(xLabel);
    setLogValueAxis(plot, logScale);
    return plot;
}

QColor seriesColour(int index)
{
    return kPalette[((index % kPaletteSize) + kPaletteSize) % kPaletteSize];
}

std::pair<QCPGraph*, QCPGraph*> addSeriesGraphs(QCustomPlot* panel, const QString& legendName, int colourIndex)
{
    const QColor base = seriesColour(colourIndex);
    QCPGraph* raw = panel->addGraph();
    raw->setPen(QPen(QColor(base.red(), base.green(), base.blue(), kRawAlpha), 1));
    raw->setAdaptiveSampling(true);
    raw->removeFromLegend();
    QCPGraph* smoothed = panel->addGraph();
    smoothed->setName(legendName);
    smoothed->setPen(QPen(base, 2));
    smoothed->setAdaptiveSampling(true);
    return {raw, smoothed};
}

void setLogValueAxis(QCustomPlot* panel, bool on)
{
    panel->yAxis->setScaleType(on ? QCPAxis::stLogarithmic : QCPAxis::stLinear);
    panel->yAxis->setTicker(on ? QSharedPointer<QCPAxisTicker>(new QCPAxisTickerLog) : QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
}

void fitValueAxis(QCustomPlot* panel, double low, double high, bool logScale)
{
    if (logScale) {
        panel->yAxis->setRange(low / kLogRangeFactor, high * kLogRangeFactor);
        return;
    }
    const double pad = high > low ? (high - low) * kRangePadding : std::max(std::abs(high) * kRangePadding, 1e-6);
    panel->yAxis->setRange(low - pad, high + pad);
}

} // namespace ringmaster::ui
