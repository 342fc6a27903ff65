#pragma once
// spdlog sink for a trainer rank: info and below to stdout, warnings and errors to stderr, each line
// flushed at once so the supervisor's per-rank logs are complete even if the process dies.

#include <cstdio>
#include <mutex>

#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>

namespace ringmaster::trainer {

template <typename Mutex>
class RankStreamSink final : public spdlog::sinks::base_sink<Mutex>
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

using RankStreamSinkMt = RankStreamSink<std::mutex>;

} // namespace ringmaster::trainer
