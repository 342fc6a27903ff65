#include "trainer/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace ringmaster::trainer {

double LrSchedule::at(std::int64_t step) const
{
    if (warmupSteps > 0 && step < warmupSteps) {
        return baseLr * static_cast<double>(step + 1) / static_cast<double>(warmupSteps);
    }
    if (kind == "step") {
        return baseLr * std::pow(gamma, static_cast<double>(step / std::max<std::int64_t>(stepSize, 1)));
    }
    if (kind == "cosine") {
        const double span = static_cast<double>(std::max<std::int64_t>(totalSteps - warmupSteps, 1));
        const double progress = std::min(1.0, static_cast<double>(step - warmupSteps) / span);
        return baseLr * 0.5 * (1.0 + std::cos(M_PI * progress));
    }
    return baseLr;
}

} // namespace ringmaster::trainer
