#include "ui/charts/scalar_chart.h"

#include <QDateTime>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QSet>
#include <QSplitter>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <tuple>

#include "ui/charts/chart_controls.h"
#include "qcustomplot.h"
#include "ui/charts/scalar_panel.h"
#include "ui/charts/series_reduction.h"

namespace ringmaster::ui {
namespace {

constexpr int kDrainIntervalMs = 33;
// As in LossChart: antialiased polylines are slow until adaptive sampling takes over.
constexpr std::size_t kAntialiasedPointLimit = 1000;
// A series this short (an evaluation per epoch) is drawn with a dot per point.
constexpr std::size_t kScatterPointLimit = 100;
constexpr double kScatterSize = 5;
// Pixel columns of the per-pixel reduction when the panel is narrower (not yet laid out, or drawn
// into a larger picture by `ringmaster-runs plot`).
constexpr int kMinColumns = 1024;

double nowUnixSeconds()
{
    return static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
}

// The ungrouped panel first, then the prefixes alphabetically.
bool panelBefore(const QString& a, const QString& b)
{
    if (a == ScalarSeriesStore::kUngroupedPanel || b == ScalarSeriesStore::kUngroupedPanel) {
        return a == ScalarSeriesStore::kUngroupedPanel && b != ScalarSeriesStore::kUngroupedPanel;
    }
    return a < b;
}

} // namespace

ScalarChart::ScalarChart(QWidget* parent)
    : QWidget(parent)
    , m_nameList(new QListWidget(this))
    , m_panelArea(new QWidget(this))
    , m_panelLayout(new QVBoxLayout(m_panelArea))
    , m_placeholder(new QLabel(m_panelArea))
{
    m_nameList->setToolTip(tr("Every scalar the run reported; tick the ones to draw"));
    m_nameList->setMinimumWidth(140);
    connect(m_nameList, &QListWidget::itemChanged, this, [this] { rebuildPanels(); });
    m_placeholder->setAlignment(Qt::AlignCenter);
    m_placeholder->setStyleSheet(QStringLiteral("color: #757575;"));
    m_panelLayout->setContentsMargins(0, 0, 0, 0);
    m_panelLayout->addWidget(m_placeholder, 1);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_panelArea);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    auto* splitter = new QSplitter(this);
    splitter->addWidget(m_nameList);
    splitter->addWidget(scroll);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({200, 800});

    m_controls = new ChartControls({{tr("x: step"), tr("x: wall time (s)")},
                                    tr("Exponential moving average weight of every smoothed line (debiased, as in TensorBoard)"),
                                    tr("Logarithmic value axes")},
                                   m_smoothingWeight, this);
    connect(m_controls, &ChartControls::axisChosen, this, [this](int index) { setXAxis(static_cast<XAxis>(index)); });
    connect(m_controls, &ChartControls::smoothingChosen, this, &ScalarChart::setSmoothing);
    connect(m_controls, &ChartControls::logScaleChosen, this, &ScalarChart::setLogScale);
    connect(m_controls, &ChartControls::fitRequested, this, &ScalarChart::fit);

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_controls);
    layout->addWidget(splitter, 1);

    rebuildPanels();
    m_drainTimer.setInterval(kDrainIntervalMs);
    connect(&m_drainTimer, &QTimer::timeout, this, &ScalarChart::flush);
    m_drainTimer.start();
}

void ScalarChart::clear()
{
    m_pending.clear();
    m_store.clear();
    m_nameList->blockSignals(true);
    m_nameList->clear();
    m_nameList->blockSignals(false);
    m_defaultTicked = false;
    m_followLatest = true;
    rebuildPanels();
}

void ScalarChart::append(const supervisor::ScalarBatch& batch)
{
    const double now = nowUnixSeconds();
    for (const auto& scalar : batch.values) appendPoint(QString(), scalar.name, batch.step, now, scalar.value);
}

void ScalarChart::appendPoint(const QString& run, const QString& name, qint64 step, double wallTime, double value)
{
    m_pending.push_back({run, name, step, wallTime, value});
    if (m_pending.size() >= kMaxPendingPoints) flush(); // the bound: drain now rather than grow
}

void ScalarChart::flush()
{
    if (m_pending.empty()) return;
    const QStringList listed = m_store.names();
    QSet<QString> known(listed.begin(), listed.end());
    QStringList newNames;    // in arrival order
    bool newTickedSeries = false; // another run's series of a name already drawn
    for (const auto& point : m_pending) {
        const bool newSeries = m_store.find(ScalarSeriesStore::keyOf(point.run, point.name)) == nullptr;
        if (!m_store.add(point.run, point.name, point.step, point.wallTime, point.value)) continue;
        if (!known.contains(point.name)) {
            known.insert(point.name);
            newNames << point.name;
        } else if (newSeries && isTicked(point.name)) {
            newTickedSeries = true;
        }
    }
    m_pending.clear();
    if ((!newNames.isEmpty() && addNames(newNames)) || newTickedSeries) {
        rebuildPanels(); // draws every point
        return;
    }
    for (auto& [key, graphs] : m_graphs) smoothNewPoints(key, &graphs);
    if (m_followLatest) followLatest();
    replotAll();
}

bool ScalarChart::addNames(const QStringList& arrivalOrder)
{
    m_nameList->blockSignals(true); // one rebuild after, not one per tick
    for (const QString& name : arrivalOrder) {
        int row = 0;
        while (row < m_nameList->count() && m_nameList->item(row)->text() < name) ++row;
        auto* item = new QListWidgetItem(name);
        item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Unchecked);
        item->setToolTip(tr("Panel \"%1\"").arg(ScalarSeriesStore::panelOf(name)));
        m_nameList->insertItem(row, item);
    }
    // `loss` is ticked whenever it appears; with none, the first name that arrived, so a script shows something.
    QString tick;
    if (arrivalOrder.contains(kDefaultName)) tick = kDefaultName;
    else if (!m_defaultTicked) tick = arrivalOrder.first();
    if (!tick.isEmpty()) {
        setTicked(tick, true);
        m_defaultTicked = true;
    }
    m_nameList->blockSignals(false);
    if (tick.isEmpty()) m_placeholder->setText(tr("Tick a scalar on the left to draw it."));
    return !tick.isEmpty();
}

void ScalarChart::rebuildPanels()
{
    for (auto& [title, plot] : m_panels) delete plot;
    m_panels.clear();
    m_graphs.clear();
    QStringList titles;
    for (const QString& name : names()) {
        if (isTicked(name) && !titles.contains(ScalarSeriesStore::panelOf(name))) titles << ScalarSeriesStore::panelOf(name);
    }
    std::sort(titles.begin(), titles.end(), panelBefore);
    for (const QString& title : titles) {
        QCustomPlot* plot = makePanel(title);
        m_panels.emplace_back(title, plot);
        m_panelLayout->addWidget(plot, 1);
        int colour = 0;
        std::map<QString, int> seriesOfRun; // a run of its own colour tells its scalars apart by line style
        for (const auto& [key, series] : m_store.series()) {
            if (ScalarSeriesStore::panelOf(series.name) != title || !isTicked(series.name)) continue;
            SeriesGraphs& graphs = m_graphs[key];
            const QString legend = series.run.isEmpty() ? series.name : series.run + QStringLiteral(" · ") + series.name;
            const auto runColour = m_runColours.find(series.run);
            std::tie(graphs.raw, graphs.smoothed) = addSeriesGraphs(plot, legend, runColour == m_runColours.end() ? colour++ : 0);
            if (runColour != m_runColours.end()) {
                static const Qt::PenStyle kStyles[] = {Qt::SolidLine, Qt::DashLine, Qt::DotLine, Qt::DashDotLine, Qt::DashDotDotLine};
                const Qt::PenStyle style = kStyles[seriesOfRun[series.run]++ % std::size(kStyles)];
                const QColor& base = runColour->second;
                QPen raw = graphs.raw->pen();
                raw.setColor(QColor(base.red(), base.green(), base.blue(), raw.color().alpha()));
                graphs.raw->setPen(raw);
                QPen smoothed = graphs.smoothed->pen();
                smoothed.setColor(base);
                smoothed.setStyle(style);
                graphs.smoothed->setPen(smoothed);
            }
            graphs.ema.setWeight(m_smoothingWeight);
            graphs.version = -1; // draw from the first point
            drawNewPoints(key, &graphs);
        }
    }
    m_placeholder->setText(m_nameList->count() == 0 ? tr("No scalars yet: they appear here as the run reports them.")
                                                    : tr("Tick a scalar on the left to draw it."));
    m_placeholder->setVisible(m_panels.empty());
    fit();
}

QCustomPlot* ScalarChart::makePanel(const QString& title)
{
    QCustomPlot* plot = createScalarPanel(m_panelArea, title, m_xAxis == XAxis::Step ? tr("step") : tr("wall time (s)"),
                                          m_controls->logScale());
    // A user who zooms or pans keeps their view; "Fit" returns to following the run.
    connect(plot, &QCustomPlot::mousePress, this, [this] { m_followLatest = false; });
    connect(plot, &QCustomPlot::mouseWheel, this, [this] { m_followLatest = false; });
    connect(plot->xAxis, qOverload<const QCPRange&>(&QCPAxis::rangeChanged), this, [this, plot] { syncXRange(plot); });
    // Zoom, pan and resize replot: hand the graphs what is visible then (nothing when unchanged).
    connect(plot, &QCustomPlot::beforeReplot, this, [this, plot] { handVisible(plot); });
    return plot;
}

double ScalarChart::keyOf(const ScalarSeries& series, std::size_t index) const
{
    return m_xAxis == XAxis::Step ? static_cast<double>(series.steps[index]) : series.walls[index] - m_store.firstWallTime(series.run);
}

void ScalarChart::smoothNewPoints(const QString& key, SeriesGraphs* graphs)
{
    const ScalarSeries* series = m_store.find(key);
    if (series == nullptr) return;
    if (graphs->version != series->version) { // decimated or truncated: smooth again from the first point
        graphs->smoothLine.clear();
        graphs->ema.reset();
        graphs->version = series->version;
    }
    for (std::size_t i = graphs->smoothLine.size(); i < series->size(); ++i) {
        const double value = series->values[i];
        graphs->smoothLine.push_back(std::isfinite(value) ? graphs->ema.add(value) : std::numeric_limits<double>::quiet_NaN());
    }
}

void ScalarChart::handVisible(const QString& key, SeriesGraphs* graphs, bool force)
{
    const ScalarSeries* series = m_store.find(key);
    if (series == nullptr) return;
    QCustomPlot* plot = graphs->raw->parentPlot();
    const QCPRange range = plot->xAxis->range();
    const int columns = std::max(plot->width(), kMinColumns);
    if (!force && graphs->handed && graphs->low == range.lower && graphs->high == range.upper && graphs->columns == columns
        && graphs->size == series->size() && graphs->version == series->version && graphs->smoothLine.size() == series->size()) {
        return;
    }
    const bool step = m_xAxis == XAxis::Step;
    const double origin = step ? 0.0 : m_store.firstWallTime(series->run);
    const auto keyAt = [series, step, origin](std::size_t i) {
        return step ? static_cast<double>(series->steps[i]) : series->walls[i] - origin;
    };
    const ReducedSeries raw = reduceToColumns(series->values, series->size(), keyAt, range.lower, range.upper, columns, false);
    const ReducedSeries smooth = reduceToColumns(graphs->smoothLine, graphs->smoothLine.size(), keyAt, range.lower, range.upper, columns, true);
    graphs->raw->setData(raw.keys, raw.values, true);
    graphs->smoothed->setData(smooth.keys, smooth.values, true);
    graphs->low = range.lower;
    graphs->high = range.upper;
    graphs->columns = columns;
    graphs->size = series->size();
    graphs->handed = true;
    const bool sparse = series->size() <= kScatterPointLimit;
    // The dots mark the measured values (the raw graph), in the series' full colour.
    const QColor colour = graphs->smoothed->pen().color();
    graphs->raw->setScatterStyle(sparse ? QCPScatterStyle(QCPScatterStyle::ssDisc, colour, colour, kScatterSize) : QCPScatterStyle());
    const bool antialiased = static_cast<std::size_t>(raw.keys.size()) <= kAntialiasedPointLimit;
    for (auto* graph : {graphs->raw, graphs->smoothed}) graph->setAntialiased(antialiased);
}

void ScalarChart::handVisible(QCustomPlot* plot)
{
    for (auto& [key, graphs] : m_graphs) {
        if (graphs.raw->parentPlot() == plot) handVisible(key, &graphs);
    }
}

void ScalarChart::drawNewPoints(const QString& key, SeriesGraphs* graphs)
{
    smoothNewPoints(key, graphs);
    handVisible(key, graphs);
}

void ScalarChart::redrawAll()
{
    for (auto& [key, graphs] : m_graphs) {
        graphs.ema.setWeight(m_smoothingWeight);
        graphs.version = -1;
        smoothNewPoints(key, &graphs);
        handVisible(key, &graphs, true);
    }
}

void ScalarChart::followLatest()
{
    // From the graphs' ends and the store's running extremes: no rescan of the points per drain.
    double first = std::numeric_limits<double>::infinity(), last = -first;
    std::map<QString, std::pair<double, double>> panelRanges;
    const bool log = m_controls->logScale();
    for (const auto& [key, graphs] : m_graphs) {
        const ScalarSeries* series = m_store.find(key);
        if (series == nullptr || series->size() == 0) continue;
        first = std::min(first, keyOf(*series, 0));
        last = std::max(last, keyOf(*series, series->size() - 1));
        if (log ? !series->hasPositive : !series->hasFinite) continue;
        auto [it, added] = panelRanges.try_emplace(ScalarSeriesStore::panelOf(series->name), log ? series->lowPositive : series->low, series->high);
        if (!added) it->second = {std::min(it->second.first, log ? series->lowPositive : series->low), std::max(it->second.second, series->high)};
    }
    if (first > last) return;
    for (auto& [title, plot] : m_panels) {
        m_syncingRanges = true;
        plot->xAxis->setRange(first, last > first ? last : first + 1.0);
        m_syncingRanges = false;
        const auto it = panelRanges.find(title);
        if (it == panelRanges.end()) continue;
        fitValueAxis(plot, it->second.first, it->second.second, log);
    }
}

void ScalarChart::syncXRange(QCustomPlot* source)
{
    if (m_syncingRanges) return;
    m_syncingRanges = true; // panels share the x axis: a zoom or pan in one moves them all
    for (auto& [title, plot] : m_panels) {
        if (plot == source) continue;
        plot->xAxis->setRange(source->xAxis->range());
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
    m_syncingRanges = false;
}

void ScalarChart::replotAll()
{
    for (auto& [title, plot] : m_panels) {
        handVisible(plot); // now, so what the graphs hold is current without waiting for the replot
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

void ScalarChart::truncateAfter(qint64 step)
{
    flush(); // what is buffered arrived before the restart
    if (m_store.truncateAfter(QString(), step).isEmpty()) return;
    for (auto& [key, graphs] : m_graphs) smoothNewPoints(key, &graphs);
    fit();
}

void ScalarChart::setRunColour(const QString& run, const QColor& colour)
{
    if (colour.isValid()) m_runColours[run] = colour;
    else m_runColours.erase(run);
    if (!m_panels.empty()) rebuildPanels();
}

void ScalarChart::setXAxis(XAxis axis)
{
    m_xAxis = axis;
    m_controls->showAxis(static_cast<int>(axis));
    for (auto& [title, plot] : m_panels) plot->xAxis->setLabel(axis == XAxis::Step ? tr("step") : tr("wall time (s)"));
    redrawAll();
    fit();
}

void ScalarChart::setSmoothing(double weight)
{
    m_smoothingWeight = std::clamp(weight, 0.0, DebiasedEma::kMaxWeight);
    m_controls->showSmoothing(m_smoothingWeight);
    redrawAll();
    replotAll();
}

void ScalarChart::setLogScale(bool on)
{
    m_controls->showLogScale(on);
    for (auto& [title, plot] : m_panels) setLogValueAxis(plot, on);
    fit();
}

void ScalarChart::fit()
{
    m_followLatest = true;
    followLatest();
    replotAll();
}

QStringList ScalarChart::names() const
{
    QStringList names;
    for (int row = 0; row < m_nameList->count(); ++row) names << m_nameList->item(row)->text();
    return names;
}

bool ScalarChart::isTicked(const QString& name) const
{
    const auto items = m_nameList->findItems(name, Qt::MatchExactly);
    return !items.isEmpty() && items.first()->checkState() == Qt::Checked;
}

void ScalarChart::setTicked(const QString& name, bool ticked)
{
    const auto items = m_nameList->findItems(name, Qt::MatchExactly);
    if (!items.isEmpty()) items.first()->setCheckState(ticked ? Qt::Checked : Qt::Unchecked);
}

QStringList ScalarChart::panelTitles() const
{
    QStringList titles;
    for (const auto& [title, plot] : m_panels) titles << title;
    return titles;
}

QCustomPlot* ScalarChart::panelPlot(const QString& title) const
{
    for (const auto& [panel, plot] : m_panels) {
        if (panel == title) return plot;
    }
    return nullptr;
}

int ScalarChart::pointCount(const QString& name, const QString& run) const
{
    const ScalarSeries* series = m_store.find(ScalarSeriesStore::keyOf(run, name));
    return series == nullptr ? 0 : static_cast<int>(series->size());
}

int ScalarChart::drawnPointCount(const QString& name, const QString& run) const
{
    const auto it = m_graphs.find(ScalarSeriesStore::keyOf(run, name));
    return it == m_graphs.end() ? -1 : it->second.raw->data()->size();
}

QVector<double> ScalarChart::smoothedValues(const QString& name, const QString& run) const
{
    QVector<double> values;
    const auto it = m_graphs.find(ScalarSeriesStore::keyOf(run, name));
    if (it == m_graphs.end()) return values;
    const ScalarSeries* series = m_store.find(it->first);
    if (series == nullptr) return values;
    DebiasedEma ema(m_smoothingWeight);
    for (std::size_t i = 0; i < series->size(); ++i) {
        if (std::isfinite(series->values[i])) values.append(ema.add(series->values[i]));
    }
    return values;
}

} // namespace ringmaster::ui
