#pragma once
// One panel of ScalarChart: a QCustomPlot styled as LossChart's (drag and wheel on both axes, fast
// polylines), with the panel's title above and a legend, and the two graphs of each series on it (raw,
// faint and left out of the legend; smoothed, in the series' colour and named in the legend). Free
// functions, so ScalarChart keeps only the bookkeeping.

#include <QColor>
#include <QString>

#include <utility>

class QCPGraph;
class QCustomPlot;
class QWidget;

namespace ringmaster::ui {

QCustomPlot* createScalarPanel(QWidget* parent, const QString& title, const QString& xLabel, bool logScale);
// The raw and the smoothed graph of one series; colourIndex picks from a ten-colour cycle.
std::pair<QCPGraph*, QCPGraph*> addSeriesGraphs(QCustomPlot* panel, const QString& legendName, int colourIndex);
void setLogValueAxis(QCustomPlot* panel, bool on);
// The INDEX-th colour of the panels' ten-colour cycle.
QColor seriesColour(int index);
// low..high with a little headroom (on a log axis, low must be above 0).
void fitValueAxis(QCustomPlot* panel, double low, double high, bool logScale);

} // namespace ringmaster::ui
