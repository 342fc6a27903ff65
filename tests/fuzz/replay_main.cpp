// The main() of a fuzz target in a build without libFuzzer (the normal gcc build): runs LLVMFuzzerTestOneInput
// once on every file named on the command line or found (recursively, in name order) in a folder named there,
// so the seed corpus and every saved crash (tests/fuzz/regressions/NAME/) replay as the ctest fuzz.replay.NAME
// in every build. A missing folder is skipped (a target may have no regressions yet); hidden files (.gitkeep)
// are not inputs. A broken property aborts, so the test fails on the input that breaks it, which is named first.
//
// The memory a reader may take is bounded here too, since a build without libFuzzer has no -malloc_limit_mb:
// RINGMASTER_FUZZ_REPLAY_DATA_MB (default 3072) caps the process's data segment and private mappings
// (RLIMIT_DATA), so an input that makes a reader allocate gigabytes fails the replay (as an exception the
// target does not expect, or an abort) instead of passing on a machine that happens to have the memory.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/resource.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

constexpr long kDefaultDataLimitMb = 3072;

void limitMemory()
{
    const char* text = std::getenv("RINGMASTER_FUZZ_REPLAY_DATA_MB");
    const long megabytes = text && *text ? std::atol(text) : kDefaultDataLimitMb;
    if (megabytes <= 0) return;
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(megabytes) * 1024 * 1024;
    if (::setrlimit(RLIMIT_DATA, &limit) != 0) std::perror("replay: setrlimit(RLIMIT_DATA)");
}

void collect(const std::filesystem::path& path, std::vector<std::filesystem::path>& files)
{
    std::error_code error;
    if (std::filesystem::is_regular_file(path, error)) {
        files.push_back(path);
        return;
    }
    if (!std::filesystem::is_directory(path, error)) return;
    std::vector<std::filesystem::path> found;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(path, error)) {
        if (entry.is_regular_file() && entry.path().filename().string().rfind('.', 0) != 0) found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
}

} // namespace

int main(int argc, char** argv)
{
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    std::vector<std::filesystem::path> files;
    for (int i = 1; i < argc; ++i) collect(argv[i], files);
    limitMemory();
    for (const auto& file : files) {
        std::ifstream in(file, std::ios::binary);
        if (!in) {
            std::fprintf(stderr, "replay: cannot read %s\n", file.c_str());
            return 1;
        }
        const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::fprintf(stderr, "replay: %s (%zu bytes)\n", file.c_str(), bytes.size());
        // A copy of exactly the input's size, as libFuzzer passes it: a read past the end lands outside it.
        std::vector<std::uint8_t> input(bytes.begin(), bytes.end());
        LLVMFuzzerTestOneInput(input.data(), input.size());
    }
    std::printf("replay: %zu inputs ran\n", files.size());
    return 0;
}
