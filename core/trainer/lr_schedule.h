#pragma once
// Learning rate as a pure function of the global step, so a resumed run continues the same curve.

#include <cstdint>
#include <string>

namespace ringmaster::trainer {

struct LrSchedule
{
    std::string kind = "constant"; // constant | step | cosine
    double baseLr = 0.01;
    std::int64_t warmupSteps = 0;  // linear ramp from baseLr/warmup to baseLr
    std::int64_t stepSize = 1;     // step: decay every stepSize steps
    double gamma = 0.1;            // step: decay factor
    std::int64_t totalSteps = 1;   // cosine: reaches 0 at totalSteps

    double at(std::int64_t step) const;
};

} // namespace ringmaster::trainer
