// The trainer log's writing half (log.h says why it is a library of its own): spdlog behind the calls
// of log.h, compiled without LibTorch's include paths so that spdlog sees the fmt it was built with.
#include "trainer/log.h"

#include <cstdio>
#include <memory>
#include <mutex>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace ringmaster::trainer::log {
namespace {

// Info and below to stdout, warnings and errors to stderr, each line flushed at once.
class RankStreamSink final : public spdlog::sinks::base_sink<std::mutex>
{
protected:
    void sink_it_(const spdlog::details::log_msg& message) override
    {
        spdlog::memory_buf_t formatted;
        this->formatter_->format(message, formatted);
        std::FILE* stream = message.level >= spdlog::level::warn ? stderr : stdout;
        std::fwrite(formatted.data(), 1, formatted.size(), stream);
        std::fflush(stream);
    }
    void flush_() override
    {
        std::fflush(stdout);
        std::fflush(stderr);
    }
};

spdlog::level::level_enum toSpdlog(Level level)
{
    switch (level) {
    case Level::debug: return spdlog::level::debug;
    case Level::info: return spdlog::level::info;
    case Level::warn: return spdlog::level::warn;
    case Level::error: return spdlog::level::err;
    }
    return spdlog::level::err;
}

} // namespace

void toRankStreams(int rank)
{
    auto logger = std::make_shared<spdlog::logger>("trainer", std::make_shared<RankStreamSink>());
    logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [rank " + std::to_string(rank) + "] [%l] %v");
    spdlog::set_default_logger(logger);
}

void toStderr(Level minimum)
{
    spdlog::set_default_logger(spdlog::stderr_color_mt("validate"));
    spdlog::set_level(toSpdlog(minimum));
}

bool enabled(Level level)
{
    return spdlog::default_logger_raw()->should_log(toSpdlog(level));
}

void write(Level level, const std::string& line)
{
    spdlog::default_logger_raw()->log(toSpdlog(level), spdlog::string_view_t(line));
}

void flush()
{
    spdlog::default_logger_raw()->flush();
}

} // namespace ringmaster::trainer::log
