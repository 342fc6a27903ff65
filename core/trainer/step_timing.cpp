#include "trainer/step_timing.h"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <utility>

#include "protocol/wire.h"

namespace ringmaster::trainer {

namespace protocol = ringmaster::protocol;

double& StepParts::operator[](StepPart part)
{
    switch (part) {
    case StepPart::Data: return data;
    case StepPart::Compute: return compute;
    case StepPart::Sync: return sync;
    case StepPart::Optimizer: break;
    }
    return optimizer;
}

StepTimer::StepTimer(std::function<void()> settle) : m_settle(std::move(settle)) {}

bool StepTimer::begin()
{
    const auto now = Clock::now();
    // A GPU step is timed once per heartbeat interval: settling costs the overlap of host and device.
    m_timing = !m_settle || now - m_lastSampled >= std::chrono::milliseconds(protocol::kHeartbeatIntervalMs);
    if (!m_timing) return false;
    if (m_settle) m_settle(); // what the previous step queued is not this step's
    m_lastSampled = now;
    m_parts = {};
    m_lastLap = Clock::now();
    return true;
}

void StepTimer::lap(StepPart part)
{
    if (!m_timing) return;
    if (m_settle) m_settle();
    const auto now = Clock::now();
    m_parts[part] += std::chrono::duration<double>(now - m_lastLap).count();
    m_lastLap = now;
}

void StepTimer::move(StepPart from, StepPart to, double seconds)
{
    if (!m_timing) return;
    const double moved = std::min(seconds, m_parts[from]);
    m_parts[from] -= moved;
    m_parts[to] += moved;
}

void StepTimings::add(const StepParts& parts)
{
    const std::lock_guard lock(m_mutex);
    m_sum.data += parts.data;
    m_sum.compute += parts.compute;
    m_sum.sync += parts.sync;
    m_sum.optimizer += parts.optimizer;
    ++m_steps;
}

nlohmann::json StepTimings::take()
{
    StepParts sum;
    std::int64_t steps = 0;
    {
        const std::lock_guard lock(m_mutex);
        std::swap(sum, m_sum);
        std::swap(steps, m_steps);
    }
    if (steps == 0) return nullptr;
    const double toMeanMs = 1000.0 / static_cast<double>(steps);
    return {{protocol::kKeyTimingSteps, steps},
            {protocol::kKeyDataMs, sum.data * toMeanMs},
            {protocol::kKeyComputeMs, sum.compute * toMeanMs},
            {protocol::kKeySyncMs, sum.sync * toMeanMs},
            {protocol::kKeyOptimizerMs, sum.optimizer * toMeanMs}};
}

std::chrono::milliseconds testSlowdownFor(int rank)
{
    const char* value = std::getenv("RINGMASTER_TEST_SLOW_RANK");
    if (value == nullptr) return std::chrono::milliseconds(0);
    const std::string text = value;
    const auto colon = text.find(':');
    if (colon == std::string::npos) return std::chrono::milliseconds(0);
    char* end = nullptr;
    const long slowRank = std::strtol(text.c_str(), &end, 10);
    if (end != text.c_str() + colon || slowRank != rank) return std::chrono::milliseconds(0);
    const long ms = std::strtol(text.c_str() + colon + 1, &end, 10);
    if (*end != '\0' || ms <= 0 || ms > 60000) return std::chrono::milliseconds(0);
    return std::chrono::milliseconds(ms);
}

} // namespace ringmaster::trainer
