#pragma once
// The "All scalars" chart: every scalar a run reports (the built-in trainer's loss, lr, val_loss, ...;
// a user script's train/loss, val/acc, grad_norm, ...). On the left, the names seen so far, sorted,
// each with a tick; `loss` is ticked by default (with no `loss`, the first name that arrived, so a
// script run shows something). Ticked names are drawn in panels grouped by prefix (ScalarSeriesStore::
// panelOf: "train/loss" and "train/acc" in panel "train"; names without '/' in panel "scalars"), one
// plot per panel, stacked, sharing the x axis, each with its legend. Each series is drawn raw (faint)
// and EMA-smoothed (DebiasedEma, as LossChart), x by step or wall time, log scale, zoom/pan, fit.
// Points arrive through append(); they are buffered and drained by a coalescing timer (~33 ms) into one
// queued replot per panel. The buffer holds at most kMaxPendingPoints (reaching it drains at once);
// the series' bound is ScalarSeriesStore's (10,000,000 points, compact: see scalar_series.h).
// Drawing: the points stay in the store; on each drain, zoom, pan, resize or replot, only the visible
// x range is handed to QCustomPlot, reduced to each pixel column's smallest and largest value
// (series_reduction.h), so every spike stays visible at any zoom and a replot of 10,000,000 points
// costs about what one of 10,000 does. The smoothed line is kept beside the store as float32 with its
// own min/max pyramid and drawn the same way. Series are keyed by run label and name (appendPoint), so
// the same widget can draw several runs overlaid; the live run's label is empty.
// A run given a colour (setRunColour: the Runs tab's compare) draws all its series in that colour, its
// scalars told apart by line style (solid, dashed, dotted, ...); other series take the next colour of the
// panel's cycle.

#include <QColor>
#include <QStringList>
#include <QTimer>
#include <QVector>
#include <QWidget>

#include <map>
#include <vector>

#include "ui/charts/debiased_ema.h"
#include "supervisor/run_types.h"
#include "ui/charts/scalar_series.h"

class QCPGraph;
class QCustomPlot;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QVBoxLayout;

namespace ringmaster::ui {

class ChartControls;

class ScalarChart : public QWidget
{
    Q_OBJECT

public:
    enum class XAxis { Step, WallTime };
    static constexpr std::size_t kMaxPendingPoints = 50000;
    static inline const QString kDefaultName = QStringLiteral("loss");
    static constexpr double kDefaultSmoothing = 0.6; // the smoothing slider's starting weight

    explicit ScalarChart(QWidget* parent = nullptr);

    // Forgets every name and point (a new run).
    void clear();
    // The live run's scalars of one step, stamped with the arrival time.
    void append(const supervisor::ScalarBatch& batch);
    // One point of one run's scalar (run "" is the live run); wallTime in Unix seconds.
    void appendPoint(const QString& run, const QString& name, qint64 step, double wallTime, double value);
    // Drains the buffer now (the timer does this every ~33 ms).
    void flush();
    // Forgets the live run's points after this step (a restart resumed from a checkpoint there).
    void truncateAfter(qint64 step);

    void setXAxis(XAxis axis);
    void setSmoothing(double weight); // 0 .. 0.999
    void setLogScale(bool on);
    void fit();
    void setMaxPointsPerSeries(std::size_t limit) { m_store.setMaxPointsPerSeries(limit); }
    // Draws every series of RUN in COLOUR (an invalid colour: back to the panel's cycle); kept across clear().
    void setRunColour(const QString& run, const QColor& colour);

    // The names listed, in list order (sorted).
    QStringList names() const;
    bool isTicked(const QString& name) const;
    void setTicked(const QString& name, bool ticked);
    // The visible panels' titles, top to bottom, and their plots.
    QStringList panelTitles() const;
    QCustomPlot* panelPlot(const QString& title) const;
    // Points kept for one run's scalar; drawn (handed to its raw graph for the visible range, after the
    // per-pixel reduction; -1 when not drawn) and the smoothed values of every kept point (in double,
    // from the stored values; the line drawn holds them as float32).
    int pointCount(const QString& name, const QString& run = QString()) const;
    int drawnPointCount(const QString& name, const QString& run = QString()) const;
    QVector<double> smoothedValues(const QString& name, const QString& run = QString()) const;
    QListWidget* nameList() const { return m_nameList; }
    const ScalarSeriesStore& store() const { return m_store; }

private:
    struct PendingPoint
    {
        QString run;
        QString name;
        qint64 step;
        double wallTime;
        double value;
    };
    struct SeriesGraphs
    {
        QCPGraph* raw = nullptr;
        QCPGraph* smoothed = nullptr;
        DebiasedEma ema;
        MinMaxColumn smoothLine; // index-aligned with the store's series; NaN where the value is not finite
        int version = 0;       // the store's version the smoothed line was computed from
        // What the graphs were last handed (to skip a reduction when nothing changed).
        double low = 0, high = 0;
        int columns = 0;
        std::size_t size = 0;
        bool handed = false;
    };

    // Lists new names (sorted in) and ticks the default; true when a name was ticked.
    bool addNames(const QStringList& arrivalOrder);
    void rebuildPanels();
    QCustomPlot* makePanel(const QString& title);
    // Extends (or recomputes, after a truncation or decimation) the smoothed line of one series.
    void smoothNewPoints(const QString& key, SeriesGraphs* graphs);
    // Hands the visible range of one series, reduced per pixel column, to its graphs (when stale).
    void handVisible(const QString& key, SeriesGraphs* graphs, bool force = false);
    void handVisible(QCustomPlot* plot);
    void drawNewPoints(const QString& key, SeriesGraphs* graphs);
    void redrawAll();
    double keyOf(const ScalarSeries& series, std::size_t index) const;
    void followLatest();
    void syncXRange(QCustomPlot* source);
    void replotAll();

    ScalarSeriesStore m_store;
    std::vector<PendingPoint> m_pending;
    QListWidget* m_nameList;
    QWidget* m_panelArea;
    QVBoxLayout* m_panelLayout;
    QLabel* m_placeholder;
    ChartControls* m_controls;
    QTimer m_drainTimer;
    std::vector<std::pair<QString, QCustomPlot*>> m_panels; // top to bottom
    std::map<QString, SeriesGraphs> m_graphs;                // by series key, drawn series only
    std::map<QString, QColor> m_runColours;                  // setRunColour's, by run label
    double m_smoothingWeight = kDefaultSmoothing;
    XAxis m_xAxis = XAxis::Step;
    bool m_followLatest = true;
    bool m_defaultTicked = false; // a name has been ticked by default since the last clear()
    bool m_syncingRanges = false;
};

} // namespace ringmaster::ui
