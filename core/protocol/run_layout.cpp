#include "protocol/run_layout.h"

namespace ringmaster::protocol {

std::string rankLogFile(std::string_view rank)
{
    return std::string(kLogsFolder) + "/rank-" + std::string(rank) + ".log";
}

std::string rankStacksFile(std::string_view rank)
{
    return std::string(kLogsFolder) + "/rank-" + std::string(rank) + ".stacks.txt";
}

std::string rankErrorFile(std::string_view rank)
{
    return std::string(kLogsFolder) + "/error-rank-" + std::string(rank) + ".json";
}

std::string slurmBatchLogFile(std::string_view jobId)
{
    return std::string(kSlurmFolder) + "/batch-" + std::string(jobId) + ".log";
}

std::string csvHeader(const char* const* columns, std::size_t count)
{
    std::string header;
    for (std::size_t i = 0; i < count; ++i) {
        if (i > 0) header += ',';
        header += columns[i];
    }
    return header;
}

std::string csvField(std::string_view text)
{
    if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
    std::string quoted = "\"";
    for (const char c : text) {
        if (c == '"') quoted += '"';
        quoted += c;
    }
    return quoted + '"';
}

} // namespace ringmaster::protocol
