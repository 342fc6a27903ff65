// The data cache's location and its key (shared_cache.h): defaultDataCacheDir() and dataFingerprint(),
// a 128-bit digest of the source's canonical path, of every regular file under it (relative name, size,
// modification time in ns, in name order; symlinked folders are followed) and of the reader's options.
// It reads no file's contents, only one stat per file, so 100k files take a fraction of a second.

#include "trainer/data/shared_cache.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainer/data/cache_format.h"

namespace ringmaster::trainer {

namespace {

namespace fs = std::filesystem;
using namespace hash64;

constexpr const char* kCacheOff = "off";
constexpr int kMaxWalkDepth = 64; // guards against a directory symlink loop in the source

// 128 bits from two different 64-bit hashes of the same bytes: FNV-1a, and FNV-1 from another basis.
class Digest128
{
public:
    void add(const void* data, std::size_t size)
    {
        const auto* bytes = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < size; ++i) {
            m_a = (m_a ^ bytes[i]) * kFnvPrime;
            m_b = (m_b * kFnvPrime) ^ bytes[i];
        }
    }
    void addNumber(std::int64_t value) { add(&value, sizeof value); }
    void addField(const std::string& text) // length first, so that fields cannot run into each other
    {
        addNumber(static_cast<std::int64_t>(text.size()));
        add(text.data(), text.size());
    }
    std::string hex() const { return hex64(mix64(m_a)) + hex64(mix64(m_b)); }

private:
    std::uint64_t m_a = kFnvOffset;
    std::uint64_t m_b = mix64(kFnvOffset);
};

} // namespace

std::string defaultDataCacheDir()
{
    if (const char* dir = std::getenv("RINGMASTER_DATA_CACHE"); dir && *dir) return dir;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return std::string(xdg) + "/ringmaster/data";
    const char* home = std::getenv("HOME");
    if (!home || !*home) {
        const passwd* user = ::getpwuid(::getuid());
        home = user ? user->pw_dir : nullptr;
    }
    if (!home || !*home) return kCacheOff; // nowhere to keep it
    return std::string(home) + "/.cache/ringmaster/data";
}

std::string dataFingerprint(const std::string& sourcePath, const std::string& options)
{
    struct FileStamp
    {
        std::string name;
        std::int64_t bytes;
        std::int64_t mtimeNs;
    };
    const auto stampOf = [](const fs::path& path, std::string name) -> std::optional<FileStamp> {
        struct stat status {};
        if (::stat(path.c_str(), &status) != 0 || !S_ISREG(status.st_mode)) return std::nullopt;
        return FileStamp{std::move(name), static_cast<std::int64_t>(status.st_size),
                         static_cast<std::int64_t>(status.st_mtim.tv_sec) * 1000000000LL + status.st_mtim.tv_nsec};
    };

    std::error_code error;
    const fs::path root = fs::weakly_canonical(fs::absolute(sourcePath, error), error);
    Digest128 digest;
    digest.addField(kDataCacheExtension + std::to_string(kDataCacheFormatVersion));
    digest.addField(root.string());
    digest.addField(options);

    std::vector<FileStamp> stamps;
    if (fs::is_directory(root, error)) {
        const auto walkOptions = fs::directory_options::follow_directory_symlink | fs::directory_options::skip_permission_denied;
        fs::recursive_directory_iterator walk(root, walkOptions, error);
        for (; !error && walk != fs::recursive_directory_iterator(); walk.increment(error)) {
            if (walk.depth() >= kMaxWalkDepth) walk.disable_recursion_pending();
            if (auto stamp = stampOf(walk->path(), walk->path().lexically_relative(root).string())) stamps.push_back(*stamp);
        }
        if (error) digest.addField("walk failed: " + error.message()); // the reader reports the real problem
    } else if (auto stamp = stampOf(root, "")) {
        stamps.push_back(*stamp);
    } else {
        digest.addField("missing");
    }
    std::sort(stamps.begin(), stamps.end(), [](const FileStamp& a, const FileStamp& b) { return a.name < b.name; });
    digest.addNumber(static_cast<std::int64_t>(stamps.size()));
    for (const auto& stamp : stamps) {
        digest.addField(stamp.name);
        digest.addNumber(stamp.bytes);
        digest.addNumber(stamp.mtimeNs);
    }
    return digest.hex();
}

} // namespace ringmaster::trainer
