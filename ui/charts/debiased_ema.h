#pragma once
// The smoothing of the charts' lines: an exponential moving average, debiased as TensorBoard does
// (the running average starts at 0, so the n-th value is divided by 1 - weight^n; the first smoothed
// value equals the first raw one). Values that are not finite are skipped by the callers (a NaN would
// poison every later value). Shared by LossChart and ScalarChart so both draw the same line.

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace ringmaster::ui {

class DebiasedEma
{
public:
    static constexpr double kMaxWeight = 0.999;

    explicit DebiasedEma(double weight = 0.6) { setWeight(weight); }

    // 0 (no smoothing) .. kMaxWeight; forgets the values seen so far.
    void setWeight(double weight)
    {
        m_weight = std::clamp(weight, 0.0, kMaxWeight);
        reset();
    }
    double weight() const { return m_weight; }

    void reset()
    {
        m_last = 0.0;
        m_count = 0;
    }

    // Adds one finite value; returns the smoothed value after it.
    double add(double value)
    {
        m_last = m_last * m_weight + (1.0 - m_weight) * value;
        ++m_count;
        const double debias = 1.0 - std::pow(m_weight, static_cast<double>(m_count));
        return debias > 0 ? m_last / debias : value;
    }

private:
    double m_weight = 0.6;
    double m_last = 0.0;
    std::size_t m_count = 0;
};

} // namespace ringmaster::ui
