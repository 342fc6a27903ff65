#pragma once
// The row above each chart (the Training tab's LossChart and the All scalars ScalarChart): what the x
// axis shows, the weight of the debiased EMA smoothing, a log value axis, and Fit. One widget so that both
// charts offer the same controls with the same wording; the charts own the state and call show*() to
// reflect a change made in code (without the control echoing it back).

#include <QStringList>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace ringmaster::ui {

class ChartControls : public QWidget
{
    Q_OBJECT

public:
    struct Texts
    {
        QStringList axes;      // the x-axis choices, in the order of the chart's XAxis enum
        QString smoothingTip;  // what the smoothing weight applies to
        QString logScaleTip;   // which axes turn logarithmic
    };

    ChartControls(const Texts& texts, double smoothing, QWidget* parent = nullptr);

    void showAxis(int index);
    void showSmoothing(double weight);
    void showLogScale(bool on);
    bool logScale() const;

Q_SIGNALS:
    void axisChosen(int index);
    void smoothingChosen(double weight);
    void logScaleChosen(bool on);
    void fitRequested();

private:
    QComboBox* m_axisChoice;
    QSlider* m_smoothingSlider;
    QLabel* m_smoothingLabel;
    QCheckBox* m_logScale;
};

} // namespace ringmaster::ui
