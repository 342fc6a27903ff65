#pragma once
// The trainer's log: every trainer file writes its lines through these calls, never through spdlog itself.
// Formatting happens here, with the fmt that LibTorch's headers bring; the writing happens in log.cpp, with
// spdlog, in a library compiled without LibTorch's include paths. That split is what lets one source tree
// build against both LibTorches: PyTorch's wheel bundles fmt 12 headers (torch/include/fmt, ahead of
// /usr/include on the include path), while Debian's compiled spdlog 1.10 was built against fmt 9, and no
// translation unit can see both. Only std::string crosses between the two, so each side keeps its own fmt.

#include <string>
#include <utility>

#include <fmt/format.h>

namespace ringmaster::trainer::log {

enum class Level { debug, info, warn, error };

// A rank's lines: "[time] [rank N] [level] text", info and below to stdout, warnings and errors to
// stderr, each flushed at once so the supervisor's per-rank logs are complete even if the process dies.
void toRankStreams(int rank);
// Only lines at `minimum` or above, to stderr (--validate-only, whose stdout is its answer).
void toStderr(Level minimum);

bool enabled(Level level);
void write(Level level, const std::string& line);
void flush();

template <typename... Args>
void at(Level level, fmt::format_string<Args...> format, Args&&... args)
{
    if (enabled(level)) write(level, fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args)
{
    at(Level::debug, format, std::forward<Args>(args)...);
}

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args)
{
    at(Level::info, format, std::forward<Args>(args)...);
}

template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args)
{
    at(Level::warn, format, std::forward<Args>(args)...);
}

template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args)
{
    at(Level::error, format, std::forward<Args>(args)...);
}

} // namespace ringmaster::trainer::log
