#include "supervisor/straggler_detector.h"

#include <QStringList>

#include <algorithm>
#include <vector>

#include "supervisor/system_sampler.h"

namespace ringmaster::supervisor {

QString stragglerMessage(const StragglerVerdict& verdict, double afterSec, int gpu, const QHash<QString, double>& gpuNow)
{
    QString line = QStringLiteral("rank %1%2 computes %3x slower than the others (%4 ms a step against their median of %5 ms) "
                                  "for %6 s; they wait for it in every all-reduce")
                       .arg(verdict.rank).arg(gpu >= 0 ? QStringLiteral(" on GPU %1").arg(gpu) : QString())
                       .arg(verdict.ratio(), 0, 'f', 1).arg(verdict.computeMs, 0, 'f', 1)
                       .arg(verdict.othersMedianMs, 0, 'f', 1).arg(afterSec);
    if (gpu < 0) return line;
    QStringList figures;
    const auto figure = [&](const char* name, const QString& format) {
        const auto it = gpuNow.constFind(QLatin1String(name));
        if (it != gpuNow.cend()) figures << format.arg(qRound(*it));
    };
    figure(system_metric::kGpuTemperatureC, QStringLiteral("at %1 C"));
    figure(system_metric::kGpuSmClockMHz, QStringLiteral("SM clock %1 MHz"));
    figure(system_metric::kGpuPowerW, QStringLiteral("%1 W"));
    if (!figures.isEmpty()) line += QStringLiteral("; GPU %1 ").arg(gpu) + figures.join(QStringLiteral(", "));
    return line;
}

double StragglerDetector::othersMedian(int rank) const
{
    std::vector<double> others;
    for (auto it = m_ranks.cbegin(); it != m_ranks.cend(); ++it) {
        if (it.key() != rank) others.push_back(it->computeMs);
    }
    if (others.empty()) return 0.0;
    std::sort(others.begin(), others.end());
    const std::size_t middle = others.size() / 2;
    return others.size() % 2 == 1 ? others[middle] : (others[middle - 1] + others[middle]) / 2.0;
}

StragglerVerdict StragglerDetector::update(int rank, const StepTiming& timing, qint64 nowMs)
{
    if (!timing.valid()) return {};
    const auto known = m_ranks.find(rank);
    if (known == m_ranks.end()) m_ranks.insert(rank, RankTrack{timing.computeMs, -1, false});
    else known->computeMs += kSmoothing * (timing.computeMs - known->computeMs);

    // Every rank is judged again: a beat of one rank moves the median that the others are compared with.
    // One rank is named per beat, the slowest of those due; another one due is named by the next beat.
    StragglerVerdict named;
    for (auto it = m_ranks.begin(); it != m_ranks.end(); ++it) {
        const double median = othersMedian(it.key());
        const bool slow = median > 0 && it->computeMs > kRatio * median && it->computeMs - median >= kMinExcessMs;
        if (!slow) {
            it->slowSinceMs = -1;
            it->named = false;
            continue;
        }
        if (it->slowSinceMs < 0) it->slowSinceMs = nowMs;
        if (m_sustainMs <= 0 || it->named || nowMs - it->slowSinceMs < m_sustainMs) continue;
        if (named.rank < 0 || it->computeMs / median > named.ratio()) named = {it.key(), it->computeMs, median};
    }
    if (named.rank >= 0) m_ranks[named.rank].named = true;
    return named;
}

bool StragglerDetector::isStraggler(int rank) const
{
    const auto it = m_ranks.constFind(rank);
    return it != m_ranks.cend() && it->named;
}

StragglerVerdict StragglerDetector::slowest() const
{
    if (m_ranks.size() < 2) return {};
    StragglerVerdict slowest;
    for (auto it = m_ranks.cbegin(); it != m_ranks.cend(); ++it) {
        if (slowest.rank < 0 || it->computeMs > slowest.computeMs) slowest = {it.key(), it->computeMs, 0.0};
    }
    slowest.othersMedianMs = othersMedian(slowest.rank);
    return slowest;
}

} // namespace ringmaster::supervisor
