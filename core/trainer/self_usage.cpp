#include "trainer/self_usage.h"

#include <cstdlib>
#include <fstream>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include "protocol/run_layout.h"
#include "protocol/wire.h"

namespace ringmaster::trainer {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

double cpuSeconds()
{
    rusage usage{};
    if (::getrusage(RUSAGE_SELF, &usage) != 0) return -1.0;
    const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// /proc/self/statm's second field: resident pages.
double residentMiB()
{
    std::ifstream statm("/proc/self/statm");
    long long size = 0;
    long long resident = 0;
    if (!(statm >> size >> resident)) return -1.0;
    return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / kMiB;
}

// /proc/self/status's "Threads:" line.
long long threadCount()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line)) {
        if (line.rfind("Threads:", 0) == 0) return std::strtoll(line.c_str() + 8, nullptr, 10); // never throws
    }
    return -1;
}

// /proc/self/io's read_bytes and write_bytes (what reached storage, not the page cache); -1 when unreadable.
void storageBytes(std::int64_t* read, std::int64_t* written)
{
    *read = *written = -1;
    std::ifstream io("/proc/self/io");
    std::string key;
    long long value = 0;
    while (io >> key >> value) {
        if (key == "read_bytes:") *read = value;
        else if (key == "write_bytes:") *written = value;
    }
}

} // namespace

nlohmann::json SelfUsage::take(Clock::time_point now)
{
    namespace metric = protocol::system_metric;
    if (m_hasPrevious && now - m_previousAt < std::chrono::milliseconds(protocol::kUsageIntervalMs)) return nullptr;
    nlohmann::json usage = nlohmann::json::object();
    if (const double rss = residentMiB(); rss >= 0.0) usage[metric::kRssMiB] = rss;
    if (const long long threads = threadCount(); threads > 0) usage[metric::kThreads] = threads;
    const double cpu = cpuSeconds();
    std::int64_t readBytes = -1;
    std::int64_t writeBytes = -1;
    storageBytes(&readBytes, &writeBytes);
    if (m_hasPrevious) {
        const double seconds = std::chrono::duration<double>(now - m_previousAt).count();
        if (cpu >= 0.0 && m_previousCpuSeconds >= 0.0) usage[metric::kCpuPercent] = 100.0 * (cpu - m_previousCpuSeconds) / seconds;
        if (readBytes >= 0 && m_previousReadBytes >= 0) {
            usage[metric::kDiskReadMiBps] = static_cast<double>(readBytes - m_previousReadBytes) / kMiB / seconds;
        }
        if (writeBytes >= 0 && m_previousWriteBytes >= 0) {
            usage[metric::kDiskWriteMiBps] = static_cast<double>(writeBytes - m_previousWriteBytes) / kMiB / seconds;
        }
    }
    m_hasPrevious = true;
    m_previousAt = now;
    m_previousCpuSeconds = cpu;
    m_previousReadBytes = readBytes;
    m_previousWriteBytes = writeBytes;
    return usage;
}

} // namespace ringmaster::trainer
