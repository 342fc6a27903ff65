#include "trainer/data/idx_folder.h"

#include <algorithm>
#include <array>
#include <filesystem>

#include <zlib.h>

#include "trainer/errors.h"

namespace ringmaster::trainer {
namespace {

constexpr std::uint8_t kIdxTypeUnsignedByte = 0x08;
// No IDX file this reader takes holds more than 16 GiB of data.
constexpr std::int64_t kMaxIdxBytes = std::int64_t(1) << 34;
// Deflate writes at most 1032 bytes of output per byte of input (zlib's documented limit, 1032:1).
constexpr std::int64_t kMaxDeflateExpansion = 1032;

std::string findIdx(const std::string& dir, const std::string& stem, const std::string& flag)
{
    for (const std::string& candidate : {dir + "/" + stem, dir + "/" + stem + ".gz"}) {
        if (std::filesystem::exists(candidate)) return candidate;
    }
    throw UsageError(flag + " " + dir + ": missing " + stem + "[.gz] (an MNIST-format IDX folder needs "
                     "train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
                     "t10k-labels-idx1-ubyte; for Fashion-MNIST install the dataset-fashion-mnist package)");
}

std::uint32_t bigEndian(const std::array<unsigned char, 4>& bytes)
{
    return (std::uint32_t(bytes[0]) << 24) | (std::uint32_t(bytes[1]) << 16) | (std::uint32_t(bytes[2]) << 8) |
           std::uint32_t(bytes[3]);
}

struct GzFile
{
    gzFile handle;
    explicit GzFile(const std::string& path) : handle(gzopen(path.c_str(), "rb")) {}
    ~GzFile() { if (handle) gzclose(handle); }
    GzFile(const GzFile&) = delete;
    GzFile& operator=(const GzFile&) = delete;
    bool read(void* buffer, std::size_t bytes)
    {
        auto* out = static_cast<unsigned char*>(buffer);
        while (bytes > 0) {
            const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(bytes, 1u << 30));
            const int got = gzread(handle, out, chunk);
            if (got <= 0) return false;
            out += got;
            bytes -= static_cast<std::size_t>(got);
        }
        return true;
    }
};

std::vector<std::int64_t> readIdxHeader(GzFile& file, const std::string& path, int expectedDims)
{
    std::array<unsigned char, 4> magic{};
    if (!file.read(magic.data(), magic.size()) || magic[0] != 0 || magic[1] != 0 ||
        magic[2] != kIdxTypeUnsignedByte || magic[3] != expectedDims) {
        throw UsageError(path + " is not an IDX file of unsigned bytes with " + std::to_string(expectedDims) +
                         " dimensions (corrupt or wrong file)");
    }
    std::vector<std::int64_t> shape;
    for (int d = 0; d < expectedDims; ++d) {
        std::array<unsigned char, 4> dim{};
        if (!file.read(dim.data(), dim.size())) throw UsageError(path + " is truncated in its header");
        shape.push_back(bigEndian(dim));
    }
    return shape;
}

} // namespace

std::string idxFolderPath(const std::string& data)
{
    return data == kFashionMnistName ? std::string(kFashionMnistDir) : data;
}

bool looksLikeIdxFolder(const std::string& dir)
{
    return std::filesystem::exists(dir + "/train-images-idx3-ubyte") ||
           std::filesystem::exists(dir + "/train-images-idx3-ubyte.gz");
}

torch::Tensor readIdxFile(const std::string& path, int expectedDims)
{
    GzFile file(path);
    if (!file.handle) {
        throw UsageError("cannot open " + path + ": check that it exists and is readable");
    }
    const auto shape = readIdxHeader(file, path, expectedDims);
    // Each dimension is up to 2^32 - 1: the product is checked before it could overflow.
    std::int64_t total = 1;
    for (const auto dim : shape) {
        if (dim <= 0 || total > kMaxIdxBytes / dim) {
            throw UsageError(path + " declares an implausible shape (corrupt file)");
        }
        total *= dim;
    }
    // A corrupt header must not make the reader allocate what it declares: the data cannot be longer than
    // the rest of the file, or (gzip'd) than deflate's largest expansion of it.
    std::error_code error;
    const auto fileBytes = static_cast<std::int64_t>(std::filesystem::file_size(path, error));
    const std::int64_t headerBytes = 4 * (1 + expectedDims);
    const std::int64_t available = error ? kMaxIdxBytes
                                         : gzdirect(file.handle) ? fileBytes - headerBytes
                                                                 : std::min(kMaxIdxBytes, fileBytes * kMaxDeflateExpansion);
    if (total > available) {
        throw UsageError(path + " is truncated: its header promises " + std::to_string(total) + " bytes of data, the file " +
                         (gzdirect(file.handle) ? "holds " : "can hold at most ") + std::to_string(available));
    }
    auto tensor = torch::empty(shape, torch::kUInt8);
    if (!file.read(tensor.data_ptr(), static_cast<std::size_t>(total))) {
        throw UsageError(path + " is truncated: its header promises " + std::to_string(total) + " bytes of data");
    }
    return tensor;
}

LoadedData readIdxSplit(const std::string& dir, const std::string& prefix, const std::string& flag)
{
    const auto imagesPath = findIdx(dir, prefix + "-images-idx3-ubyte", flag);
    const auto labelsPath = findIdx(dir, prefix + "-labels-idx1-ubyte", flag);
    auto images = readIdxFile(imagesPath, 3);
    auto labels = readIdxFile(labelsPath, 1);
    if (images.size(0) != labels.size(0)) {
        throw UsageError(flag + " " + dir + ": " + imagesPath + " holds " + std::to_string(images.size(0)) +
                         " images but " + labelsPath + " holds " + std::to_string(labels.size(0)) + " labels");
    }
    LoadedData split;
    split.inputs = images.unsqueeze(1).contiguous();
    split.targets = labels.to(torch::kInt64);
    split.description = "IDX folder " + dir + " (" + std::to_string(images.size(0)) + " " + prefix + " images, 1x" +
                        std::to_string(images.size(1)) + "x" + std::to_string(images.size(2)) + ")";
    return split;
}

} // namespace ringmaster::trainer
