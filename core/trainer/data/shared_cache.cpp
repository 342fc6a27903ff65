// The per-machine data cache of shared_cache.h: where it lives, the layout of a cache file, and how one
// process builds it while the others wait and then map it (the key, dataFingerprint(), and the default
// folder are in cache_fingerprint.cpp).
//
// Where: defaultDataCacheDir(), ~/.cache/ringmaster/data unless RINGMASTER_DATA_CACHE or
// XDG_CACHE_HOME say otherwise. A dataset (with its reader's options) is DIR/<fingerprint>.rmdata, next
// to DIR/<fingerprint>.lock, an empty file that only carries the flock. Nothing is ever evicted.
// Deleting the folder, or any file in it, is safe whenever no run is building a cache: a run that has
// the file mapped keeps reading it (Linux keeps an unlinked file's pages while a mapping holds them),
// and the next run rebuilds what is missing.
//
// File layout (integers in host byte order: the file never leaves the machine that wrote it):
//   [0, 8)     magic "RMDATA\r\n" (the CR LF catches a text-mode copy)
//   [8, 12)    format version, uint32 (kFormatVersion)
//   [12, 16)   zero
//   [16, 24)   H, the JSON header's length in bytes, uint64
//   [24, 24+H) the JSON header:
//       {"fingerprint": "<hex>", "fileBytes": <the file's total length>, "checksum": "<hex>",
//        "inputs":  {"dtype": "uint8", "shape": [N, C, H, W], "offset": <bytes>, "bytes": <bytes>},
//        "targets": {... as inputs; null when the data has no targets ...},
//        "classNames": ["...", ...], "description": "..."}
//   then zero bytes up to each tensor's offset: every offset is a multiple of kPageBytes, so the tensors
//   alias the read-only mapping directly, without a copy. The checksum covers the tensors' bytes.
// A file is used only when every one of these holds: the magic, the version, a header that parses with
// every field of the right type, the fingerprint asked for, fileBytes equal to the file's length, each
// tensor inside the file with bytes = elements x element size, and the checksum. Anything else is
// rebuilt (logged as a warning), never trusted.
//
// Building: take flock(DIR/<fp>.lock), look again (another process may have built it while this one
// waited), else call build(), write DIR/<fp>.rmdata.tmp-<pid> (AtomicFile: every write checked, fsync,
// rename, folder fsync) and map the result. Only the lock holder builds a fingerprint, so a temp file of
// that fingerprint found then is a crashed builder's and is removed.

#include "trainer/data/shared_cache.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainer/atomic_file.h"
#include "trainer/errors.h"
#include "trainer/log.h"
#include "trainer/data/cache_format.h"

namespace ringmaster::trainer {

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace hash64;

constexpr char kMagic[8] = {'R', 'M', 'D', 'A', 'T', 'A', '\r', '\n'};
constexpr std::uint32_t kFormatVersion = kDataCacheFormatVersion;
constexpr std::size_t kPrefixBytes = 24; // magic, version, zero, header length
constexpr std::uint64_t kPageBytes = 4096;
constexpr const char* kCacheExtension = kDataCacheExtension;
constexpr const char* kLockExtension = ".lock";

// Four independent multiply-xor lanes over 8-byte words: fast enough to check ~GB/s on every open.
std::uint64_t bytesChecksum(const unsigned char* data, std::uint64_t size, std::uint64_t seed)
{
    std::uint64_t lanes[4] = {seed, mix64(seed + 1), mix64(seed + 2), mix64(seed + 3)};
    std::uint64_t i = 0;
    for (; i + 32 <= size; i += 32) {
        for (int lane = 0; lane < 4; ++lane) {
            std::uint64_t word;
            std::memcpy(&word, data + i + 8 * lane, sizeof word);
            lanes[lane] = (lanes[lane] ^ word) * kFnvPrime;
        }
    }
    std::uint64_t hash = mix64(lanes[0]) ^ mix64(lanes[1] + 1) ^ mix64(lanes[2] + 2) ^ mix64(lanes[3] + 3);
    for (; i < size; ++i) hash = (hash ^ data[i]) * kFnvPrime;
    return mix64(hash ^ size);
}

std::uint64_t roundUpToPage(std::uint64_t bytes) { return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes; }

const std::vector<std::pair<torch::ScalarType, std::string>>& dtypeNames()
{
    static const std::vector<std::pair<torch::ScalarType, std::string>> names = {
        {torch::kUInt8, "uint8"}, {torch::kInt8, "int8"},       {torch::kInt16, "int16"},
        {torch::kInt32, "int32"}, {torch::kInt64, "int64"},     {torch::kFloat16, "float16"},
        {torch::kFloat32, "float32"}, {torch::kFloat64, "float64"}, {torch::kBool, "bool"}};
    return names;
}

std::optional<torch::ScalarType> dtypeFromName(const std::string& name)
{
    for (const auto& [dtype, dtypeName] : dtypeNames())
        if (dtypeName == name) return dtype;
    return std::nullopt;
}

// ---- reading ----------------------------------------------------------------------------------------

class Mapping // one read-only mapping of a whole cache file, shared by the tensors that alias it
{
public:
    Mapping(void* base, std::size_t bytes) : m_base(base), m_bytes(bytes) {}
    ~Mapping() { ::munmap(m_base, m_bytes); }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    unsigned char* bytes() const { return static_cast<unsigned char*>(m_base); }

private:
    void* m_base;
    std::size_t m_bytes;
};

struct Unusable // why a cache file cannot be used
{
    std::string reason;
};

struct TensorEntry
{
    torch::ScalarType dtype = torch::kUInt8;
    std::vector<std::int64_t> shape;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
};

TensorEntry parseEntry(const json& entry, std::uint64_t dataStart, std::uint64_t fileBytes, const char* name)
{
    TensorEntry parsed;
    const auto dtype = dtypeFromName(entry.at("dtype").get<std::string>());
    if (!dtype) throw Unusable{std::string(name) + " has an unknown dtype"};
    parsed.dtype = *dtype;
    std::uint64_t elements = 1;
    for (const auto& dimension : entry.at("shape")) {
        const auto size = dimension.get<std::int64_t>();
        if (size < 0 || __builtin_mul_overflow(elements, static_cast<std::uint64_t>(size), &elements))
            throw Unusable{std::string(name) + " has an impossible shape"};
        parsed.shape.push_back(size);
    }
    parsed.offset = entry.at("offset").get<std::uint64_t>();
    parsed.bytes = entry.at("bytes").get<std::uint64_t>();
    std::uint64_t expected = 0;
    if (__builtin_mul_overflow(elements, torch::elementSize(parsed.dtype), &expected) || expected != parsed.bytes)
        throw Unusable{std::string(name) + "' byte count does not match its shape"};
    if (parsed.offset % kPageBytes != 0 || parsed.offset < dataStart || parsed.offset > fileBytes
        || parsed.bytes > fileBytes - parsed.offset)
        throw Unusable{std::string(name) + " lies outside the file"};
    return parsed;
}

torch::Tensor aliasMapping(const std::shared_ptr<Mapping>& mapping, const TensorEntry& entry)
{
    return torch::from_blob(mapping->bytes() + entry.offset, entry.shape, [mapping](void*) {},
                            torch::TensorOptions().dtype(entry.dtype));
}

// The data of a complete cache file for `fingerprint` at `path`, or Unusable (the reason is empty when
// the file does not exist).
LoadedData openCache(const std::string& path, const std::string& fingerprint)
{
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw Unusable{errno == ENOENT ? std::string() : errno == ELOOP ? "a symbolic link" : std::strerror(errno)};
    struct stat status {};
    const bool statted = ::fstat(fd, &status) == 0;
    // A cache folder may be shared (RINGMASTER_DATA_CACHE on a group's disk): only a file this user wrote, and
    // that nobody else may change, is trusted. Another's would be rebuilt (or, where it cannot be replaced, the
    // data decoded in memory): its checksum guards against damage, not against someone writing other data.
    if (statted && (status.st_uid != ::geteuid() || (status.st_mode & (S_IWGRP | S_IWOTH)) != 0)) {
        ::close(fd);
        throw Unusable{status.st_uid != ::geteuid() ? "written by another user (uid " + std::to_string(status.st_uid) + "): not trusted"
                                                    : std::string("writable by other users: not trusted")};
    }
    const auto fileBytes = static_cast<std::uint64_t>(status.st_size);
    void* base = MAP_FAILED;
    if (statted && S_ISREG(status.st_mode) && fileBytes >= kPrefixBytes)
        base = ::mmap(nullptr, fileBytes, PROT_READ, MAP_SHARED, fd, 0);
    const int mapError = errno;
    ::close(fd); // the mapping keeps the file
    if (!statted || !S_ISREG(status.st_mode)) throw Unusable{"not a regular file"};
    if (fileBytes < kPrefixBytes) throw Unusable{"shorter than its fixed header"};
    if (base == MAP_FAILED) throw Unusable{std::string("cannot map it: ") + std::strerror(mapError)};
    const auto mapping = std::make_shared<Mapping>(base, fileBytes);
    const unsigned char* bytes = mapping->bytes();

    if (std::memcmp(bytes, kMagic, sizeof kMagic) != 0) throw Unusable{"not a Ringmaster data cache"};
    std::uint32_t version = 0;
    std::uint64_t headerBytes = 0;
    std::memcpy(&version, bytes + 8, sizeof version);
    std::memcpy(&headerBytes, bytes + 16, sizeof headerBytes);
    if (version != kFormatVersion) throw Unusable{"format version " + std::to_string(version)};
    if (headerBytes > fileBytes - kPrefixBytes) throw Unusable{"its header runs past the end"};
    try {
        const json header = json::parse(bytes + kPrefixBytes, bytes + kPrefixBytes + headerBytes);
        if (header.at("fileBytes").get<std::uint64_t>() != fileBytes)
            throw Unusable{"length " + std::to_string(fileBytes) + " bytes, the header says "
                           + std::to_string(header.at("fileBytes").get<std::uint64_t>())};
        if (header.at("fingerprint").get<std::string>() != fingerprint) throw Unusable{"another fingerprint"};
        const std::uint64_t dataStart = kPrefixBytes + headerBytes;
        const TensorEntry inputs = parseEntry(header.at("inputs"), dataStart, fileBytes, "inputs");
        const json& targetsEntry = header.at("targets");
        std::optional<TensorEntry> targets;
        if (!targetsEntry.is_null()) targets = parseEntry(targetsEntry, dataStart, fileBytes, "targets");
        std::uint64_t checksum = bytesChecksum(bytes + inputs.offset, inputs.bytes, 0);
        if (targets) checksum = bytesChecksum(bytes + targets->offset, targets->bytes, checksum);
        if (hex64(checksum) != header.at("checksum").get<std::string>()) throw Unusable{"checksum mismatch"};

        LoadedData data;
        data.inputs = aliasMapping(mapping, inputs);
        if (targets) data.targets = aliasMapping(mapping, *targets);
        data.classNames = header.at("classNames").get<std::vector<std::string>>();
        data.description = header.at("description").get<std::string>();
        return data;
    } catch (const json::exception& error) {
        throw Unusable{std::string("bad header: ") + error.what()};
    }
}

// ---- writing ----------------------------------------------------------------------------------------

json describeTensor(const torch::Tensor& tensor, std::uint64_t offset)
{
    if (!tensor.defined()) return nullptr;
    for (const auto& [dtype, name] : dtypeNames()) {
        if (dtype == tensor.scalar_type())
            return {{"dtype", name}, {"shape", tensor.sizes().vec()}, {"offset", offset}, {"bytes", tensor.nbytes()}};
    }
    throw std::invalid_argument(std::string("data cache: unsupported dtype ") + c10::toString(tensor.scalar_type()));
}

void writeZeros(AtomicFile& file, std::uint64_t count)
{
    static const char zeros[kPageBytes] = {};
    for (; count > 0; count -= std::min<std::uint64_t>(count, kPageBytes))
        file.write(zeros, std::min<std::uint64_t>(count, kPageBytes));
}

void writeCache(const std::string& path, const std::string& fingerprint, const LoadedData& data)
{
    const torch::Tensor inputs = data.inputs.cpu().contiguous();
    const torch::Tensor targets = data.targets.defined() ? data.targets.cpu().contiguous() : torch::Tensor();
    const auto* inputBytes = static_cast<const unsigned char*>(inputs.data_ptr());
    std::uint64_t checksum = bytesChecksum(inputBytes, inputs.nbytes(), 0);
    if (targets.defined()) checksum = bytesChecksum(static_cast<const unsigned char*>(targets.data_ptr()), targets.nbytes(), checksum);

    // The offsets depend on the header's length, which depends on the offsets' digits: iterate to the
    // fixed point (two rounds at most in practice; the data start only grows).
    std::uint64_t inputsOffset = kPageBytes;
    std::uint64_t targetsOffset = 0;
    std::uint64_t fileBytes = 0;
    std::string header;
    for (;;) {
        targetsOffset = roundUpToPage(inputsOffset + inputs.nbytes());
        fileBytes = targets.defined() ? targetsOffset + targets.nbytes() : inputsOffset + inputs.nbytes();
        header = json{{"fingerprint", fingerprint}, {"fileBytes", fileBytes}, {"checksum", hex64(checksum)},
                      {"inputs", describeTensor(inputs, inputsOffset)},
                      {"targets", describeTensor(targets, targetsOffset)},
                      {"classNames", data.classNames}, {"description", data.description}}.dump();
        const std::uint64_t needed = roundUpToPage(kPrefixBytes + header.size());
        if (needed <= inputsOffset) break;
        inputsOffset = needed;
    }

    AtomicFile file(path);
    const std::uint32_t version = kFormatVersion;
    const std::uint32_t zero = 0;
    const std::uint64_t headerBytes = header.size();
    file.write(kMagic, sizeof kMagic);
    file.write(&version, sizeof version);
    file.write(&zero, sizeof zero);
    file.write(&headerBytes, sizeof headerBytes);
    file.write(header.data(), header.size());
    writeZeros(file, inputsOffset - kPrefixBytes - header.size());
    file.write(inputBytes, inputs.nbytes());
    if (targets.defined()) {
        writeZeros(file, targetsOffset - inputsOffset - inputs.nbytes());
        file.write(targets.data_ptr(), targets.nbytes());
    }
    file.commit();
}

// mkdir -p with mode 0700 for the folders it creates.
void makeFolders(const std::string& dir)
{
    const auto isFolder = [](const std::string& path) {
        struct stat status {};
        return ::stat(path.c_str(), &status) == 0 && S_ISDIR(status.st_mode);
    };
    for (std::size_t end = dir.find('/', 1);; end = dir.find('/', end + 1)) {
        const std::string prefix = dir.substr(0, end);
        if (!prefix.empty() && ::mkdir(prefix.c_str(), 0700) != 0) {
            const int error = errno;
            if (!isFolder(prefix)) throw IoError(dir, "create folder", error == EEXIST ? ENOTDIR : error);
        }
        if (end == std::string::npos) break;
    }
}

// Holds flock(LOCK_EX) on a lock file while it lives; closing the descriptor releases it, and so does
// the process's death, so a crashed builder never blocks the next.
class ExclusiveLock
{
public:
    explicit ExclusiveLock(const std::string& path) : m_fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600))
    {
        if (m_fd < 0) throw IoError(path, "create lock file", errno);
        if (::flock(m_fd, LOCK_EX | LOCK_NB) == 0) return;
        int error = errno;
        if (error == EWOULDBLOCK) {
            log::info("waiting for another process to finish building the data cache ({})", path);
            while ((error = ::flock(m_fd, LOCK_EX) == 0 ? 0 : errno) == EINTR) {}
        }
        if (error != 0) {
            ::close(m_fd);
            throw IoError(path, "lock", error);
        }
    }
    ~ExclusiveLock() { ::close(m_fd); }
    ExclusiveLock(const ExclusiveLock&) = delete;
    ExclusiveLock& operator=(const ExclusiveLock&) = delete;

private:
    int m_fd;
};

// Temp files of this fingerprint left by a builder that died (only the lock holder calls this).
void removeStaleTempFiles(const std::string& cachePath)
{
    const fs::path finalPath(cachePath);
    const std::string prefix = finalPath.filename().string() + ".tmp-";
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(finalPath.parent_path(), error)) {
        if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove(entry.path(), error);
    }
}

} // namespace

CachedData mapOrBuildCache(const std::string& cacheDir, const std::string& fingerprint,
                           const std::function<LoadedData()>& build)
{
    if (fingerprint.empty() || fingerprint.find('/') != std::string::npos)
        throw std::invalid_argument("data cache: bad fingerprint '" + fingerprint + "'");
    const std::string path = (fs::path(cacheDir) / (fingerprint + kCacheExtension)).string();
    // A published file is complete (it appears by rename), so a valid one needs no lock.
    try {
        return {openCache(path, fingerprint), path, false};
    } catch (const Unusable&) {
    }

    makeFolders(cacheDir);
    const ExclusiveLock lock((fs::path(cacheDir) / (fingerprint + kLockExtension)).string());
    try {
        return {openCache(path, fingerprint), path, false}; // another process built it while we waited
    } catch (const Unusable& unusable) {
        if (!unusable.reason.empty()) log::warn("data cache {} is unusable ({}): rebuilding it", path, unusable.reason);
    }
    removeStaleTempFiles(path);
    const auto started = std::chrono::steady_clock::now();
    writeCache(path, fingerprint, build());
    try {
        CachedData cached{openCache(path, fingerprint), path, true};
        log::info("data cache {} written in {:.1f} s", path,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
        return cached;
    } catch (const Unusable& unusable) {
        throw std::runtime_error("cannot read back the data cache " + path + " just written: " + unusable.reason);
    }
}

} // namespace ringmaster::trainer
