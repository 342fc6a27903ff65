#include "ui/charts/chart_controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSlider>

#include <cmath>

namespace ringmaster::ui {
namespace {

constexpr int kSmoothingSteps = 100; // the slider moves in hundredths: 0.00 .. 0.99
constexpr int kSliderMaxWidth = 160;
constexpr int kGroupSpacing = 12;

} // namespace

ChartControls::ChartControls(const Texts& texts, double smoothing, QWidget* parent)
    : QWidget(parent)
{
    m_axisChoice = new QComboBox(this);
    m_axisChoice->addItems(texts.axes);
    m_axisChoice->setToolTip(tr("What the horizontal axis shows"));
    connect(m_axisChoice, &QComboBox::currentIndexChanged, this, &ChartControls::axisChosen);
    m_smoothingSlider = new QSlider(Qt::Horizontal, this);
    m_smoothingSlider->setRange(0, kSmoothingSteps - 1);
    m_smoothingSlider->setMaximumWidth(kSliderMaxWidth);
    m_smoothingSlider->setToolTip(texts.smoothingTip);
    m_smoothingLabel = new QLabel(this);
    showSmoothing(smoothing);
    connect(m_smoothingSlider, &QSlider::valueChanged, this,
            [this](int value) { Q_EMIT smoothingChosen(static_cast<double>(value) / kSmoothingSteps); });
    m_logScale = new QCheckBox(tr("log scale"), this);
    m_logScale->setToolTip(texts.logScaleTip);
    connect(m_logScale, &QCheckBox::toggled, this, &ChartControls::logScaleChosen);
    auto* fitButton = new QPushButton(tr("Fit"), this);
    fitButton->setToolTip(tr("Show the whole run and follow new steps again"));
    connect(fitButton, &QPushButton::clicked, this, &ChartControls::fitRequested);

    auto* row = new QHBoxLayout(this);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_axisChoice);
    row->addSpacing(kGroupSpacing);
    row->addWidget(m_smoothingLabel);
    row->addWidget(m_smoothingSlider);
    row->addSpacing(kGroupSpacing);
    row->addWidget(m_logScale);
    row->addStretch(1);
    row->addWidget(fitButton);
}

void ChartControls::showAxis(int index)
{
    const QSignalBlocker quiet(m_axisChoice);
    m_axisChoice->setCurrentIndex(index);
}

void ChartControls::showSmoothing(double weight)
{
    m_smoothingLabel->setText(tr("smoothing %1").arg(weight, 0, 'f', 2));
    const QSignalBlocker quiet(m_smoothingSlider);
    m_smoothingSlider->setValue(static_cast<int>(std::lround(weight * kSmoothingSteps)));
}

void ChartControls::showLogScale(bool on)
{
    const QSignalBlocker quiet(m_logScale);
    m_logScale->setChecked(on);
}

bool ChartControls::logScale() const
{
    return m_logScale->isChecked();
}

} // namespace ringmaster::ui
