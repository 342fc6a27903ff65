#pragma once
// The System panel of the All scalars tab (and of an opened run in the Runs tab): what every rank used over the
// run, one metric at a time (a list of the names seen: cpu_percent, rss_mib, gpu_util_percent, ...), one line per
// rank and, with two ranks or more, the band from the least to the largest value across the ranks with their
// median dashed, x in seconds since the run's first sample. The data is SystemSeries' (system_series.h); samples
// arrive through append() and are drawn by a coalescing timer, one replot at most every kReplotMs.

#include <QTimer>
#include <QWidget>

#include "supervisor/run_types.h"
#include "runs/scalar_table.h"
#include "ui/charts/system_series.h"

class QComboBox;
class QCustomPlot;
class QLabel;

namespace ringmaster::ui {

class SystemPanel : public QWidget
{
    Q_OBJECT

public:
    static constexpr int kReplotMs = 500;

    explicit SystemPanel(QWidget* parent = nullptr);

    void append(const QList<supervisor::SystemSample>& samples);
    // A finished run's system.csv (runs::readRunSystem's records); replaces what was shown.
    void showRecords(const QList<runs::ScalarRecord>& records);
    void clear();
    // Draws what arrived now (tests, and before a screenshot).
    void flush();

    QString metric() const;
    void setMetric(const QString& name);
    QStringList metrics() const { return m_series.names(); }
    // What is drawn: the rank lines (by rank) and the band's ticks (0 without a band).
    int drawnRanks() const;
    int drawnPoints(int rank) const;
    int bandPoints() const;

private:
    void replot();

    SystemSeries m_series;
    QComboBox* m_metric;
    QLabel* m_note;
    QCustomPlot* m_plot;
    QTimer m_replot;
    bool m_dirty = false;
    QMap<int, int> m_drawn; // rank -> points drawn
    int m_bandPoints = 0;
};

} // namespace ringmaster::ui
