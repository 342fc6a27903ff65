#include "ui/charts/system_panel.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "qcustomplot.h"
#include "ui/charts/scalar_panel.h"

namespace ringmaster::ui {
namespace {

constexpr int kBandAlpha = 45;
constexpr double kRangePadding = 0.05;

} // namespace

SystemPanel::SystemPanel(QWidget* parent)
    : QWidget(parent)
    , m_metric(new QComboBox(this))
    , m_note(new QLabel(this))
    , m_plot(createScalarPanel(this, tr("System"), tr("seconds since the first sample"), false))
{
    m_metric->setToolTip(tr("What each rank used, sampled by the launcher every 2 s (system.csv): one line per rank, "
                            "and the band from the least to the largest across the ranks"));
    m_note->setText(tr("No system samples yet: the launcher samples every rank of a run on this machine every 2 s."));
    auto* top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("System metric"), this));
    top->addWidget(m_metric, 1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_note);
    layout->addWidget(m_plot, 1);
    connect(m_metric, &QComboBox::currentTextChanged, this, [this] { replot(); });
    m_replot.setInterval(kReplotMs);
    m_replot.setSingleShot(true);
    connect(&m_replot, &QTimer::timeout, this, &SystemPanel::replot);
}

void SystemPanel::append(const QList<supervisor::SystemSample>& samples)
{
    m_series.append(samples);
    if (!m_replot.isActive()) m_replot.start();
}

void SystemPanel::showRecords(const QList<runs::ScalarRecord>& records)
{
    clear();
    m_series.appendRecords(records);
    replot();
}

void SystemPanel::clear()
{
    m_series.clear();
    m_replot.stop();
    replot();
}

void SystemPanel::flush()
{
    m_replot.stop();
    replot();
}

QString SystemPanel::metric() const { return m_metric->currentText(); }

void SystemPanel::setMetric(const QString& name) { m_metric->setCurrentText(name); }

int SystemPanel::drawnRanks() const { return static_cast<int>(m_drawn.size()); }

int SystemPanel::drawnPoints(int rank) const { return m_drawn.value(rank, 0); }

int SystemPanel::bandPoints() const { return m_bandPoints; }

void SystemPanel::replot()
{
    // The list of metrics follows what arrived; the choice stays (cpu_percent first when there is no choice yet).
    const QStringList names = m_series.names();
    const QString chosen = m_metric->currentText();
    QStringList listed;
    for (int i = 0; i < m_metric->count(); ++i) listed << m_metric->itemText(i);
    if (listed != names) {
        const QSignalBlocker quiet(m_metric);
        m_metric->clear();
        m_metric->addItems(names);
        const QString keep = names.contains(chosen) ? chosen
                             : names.contains(QStringLiteral("cpu_percent")) ? QStringLiteral("cpu_percent")
                                                                             : names.value(0);
        m_metric->setCurrentText(keep);
    }
    m_note->setVisible(names.isEmpty());
    m_plot->clearGraphs();
    m_drawn.clear();
    m_bandPoints = 0;
    const QString name = m_metric->currentText();
    double low = 0.0;
    double high = 1.0;
    bool any = false;
    const auto widen = [&](const QVector<double>& values) {
        for (const double value : values) {
            low = any ? std::min(low, value) : value;
            high = any ? std::max(high, value) : value;
            any = true;
        }
    };
    const SystemSeries::Band band = m_series.band(name);
    if (!band.seconds.isEmpty()) {
        QCPGraph* least = m_plot->addGraph();
        least->setData(band.seconds, band.least, true);
        least->setPen(Qt::NoPen);
        least->removeFromLegend();
        QCPGraph* most = m_plot->addGraph();
        most->setData(band.seconds, band.most, true);
        most->setPen(Qt::NoPen);
        most->setBrush(QColor(120, 120, 120, kBandAlpha));
        most->setChannelFillGraph(least);
        most->setName(tr("least to largest"));
        QCPGraph* median = m_plot->addGraph();
        median->setData(band.seconds, band.median, true);
        median->setPen(QPen(QColor(80, 80, 80), 1, Qt::DashLine));
        median->setName(tr("median"));
        m_bandPoints = static_cast<int>(band.seconds.size());
    }
    const QList<int> ranks = m_series.ranks(name);
    for (int i = 0; i < ranks.size(); ++i) {
        const SystemSeries::Points points = m_series.points(name, ranks[i]);
        QCPGraph* line = m_plot->addGraph();
        line->setData(points.seconds, points.values, true);
        line->setPen(QPen(seriesColour(i), 2));
        line->setName(tr("rank %1").arg(ranks[i]));
        m_drawn.insert(ranks[i], static_cast<int>(points.seconds.size()));
        widen(points.values);
    }
    m_plot->rescaleAxes();
    const double pad = std::max((high - low) * kRangePadding, 1e-9);
    m_plot->yAxis->setRange(low - pad, high + pad);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

} // namespace ringmaster::ui
