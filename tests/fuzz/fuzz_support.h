#pragma once
// What every fuzz target in tests/fuzz shares (plain C++17, no Qt, no LibTorch): a check that stops the process
// (a fuzz finding under libFuzzer, a failed fuzz.replay test in the normal build), one private temporary folder
// per process for readers that only take paths (removed when the process exits normally), and the splitting of
// one input into parts for readers that take several files. Each target's header says what it feeds and what
// must hold; a reader's documented error for bad input (UsageError, JobError, an error string) is caught by
// the target, anything else escaping it is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <unistd.h>

namespace ringmaster::fuzz {

// Reports the broken property and aborts (libFuzzer saves the input as a crash artifact).
[[noreturn]] inline void fail(const char* condition, const char* file, int line)
{
    std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", condition, file, line);
    std::abort();
}

#define FUZZ_CHECK(condition) \
    ((condition) ? static_cast<void>(0) : ::ringmaster::fuzz::fail(#condition, __FILE__, __LINE__))

// A folder of this process under TMPDIR (or /tmp), made on first use and removed with everything in it at
// exit. A target writes only here.
class ScratchFolder
{
public:
    static const std::filesystem::path& path()
    {
        static ScratchFolder folder;
        return folder.m_path;
    }

    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;

private:
    ScratchFolder()
    {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base && *base ? base : "/tmp") + "/ringmaster-fuzz-XXXXXX";
        if (!::mkdtemp(pattern.data())) {
            std::perror("ringmaster fuzz: cannot create a scratch folder");
            std::abort();
        }
        m_path = pattern;
    }
    ~ScratchFolder()
    {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }

    std::filesystem::path m_path;
};

// Writes bytes to NAME inside the scratch folder (replacing it) and returns its path.
inline std::string writeScratchFile(const std::string& name, std::string_view bytes)
{
    const auto path = ScratchFolder::path() / name;
    std::error_code ignored;
    std::filesystem::create_directories(path.parent_path(), ignored);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
        std::fprintf(stderr, "ringmaster fuzz: cannot write %s\n", path.c_str());
        std::abort();
    }
    return path.string();
}

// Empties the scratch folder's sub-folder NAME (made if missing) and returns its path.
inline std::string freshScratchFolder(const std::string& name)
{
    const auto path = ScratchFolder::path() / name;
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
    std::filesystem::create_directories(path, ignored);
    return path.string();
}

// The separator between the parts of an input for targets that read several files (an IDX folder's images
// and labels). The seed corpus holds it, so mutations keep most inputs split in two.
inline constexpr std::string_view kPartSeparator = "\n--ringmaster-fuzz-part--\n";

// Splits at the first separator: {before, after}; without one, {everything, ""}.
inline std::vector<std::string_view> splitInTwo(std::string_view input)
{
    const auto at = input.find(kPartSeparator);
    if (at == std::string_view::npos) return {input, std::string_view()};
    return {input.substr(0, at), input.substr(at + kPartSeparator.size())};
}

inline std::string_view asText(const std::uint8_t* data, std::size_t size)
{
    return std::string_view(reinterpret_cast<const char*>(data), size);
}

} // namespace ringmaster::fuzz
