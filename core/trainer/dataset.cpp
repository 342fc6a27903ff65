#include "dataset.h"

#include <array>
#include <filesystem>

#include <ATen/CPUGeneratorImpl.h>
#include <zlib.h>

#include "errors.h"

namespace ringmaster::trainer {
namespace {

constexpr std::uint8_t kIdxTypeUnsignedByte = 0x08;

std::string findIdx(const std::string& dir, const std::string& stem)
{
    for (const std::string& candidate : {dir + "/" + stem, dir + "/" + stem + ".gz"}) {
        if (std::filesystem::exists(candidate)) return candidate;
    }
    throw UsageError("--data " + dir + ": missing " + stem + "[.gz] (an MNIST-format IDX folder needs "
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

TensorDataset loadSplit(const std::string& dir, const std::string& prefix)
{
    const auto imagesPath = findIdx(dir, prefix + "-images-idx3-ubyte");
    const auto labelsPath = findIdx(dir, prefix + "-labels-idx1-ubyte");
    auto images = readIdxFile(imagesPath, 3);
    auto labels = readIdxFile(labelsPath, 1);
    if (images.size(0) != labels.size(0)) {
        throw UsageError("--data " + dir + ": " + imagesPath + " holds " + std::to_string(images.size(0)) +
                         " images but " + labelsPath + " holds " + std::to_string(labels.size(0)) + " labels");
    }
    if (labels.max().item<int>() > 9) {
        throw UsageError("--data " + dir + ": " + labelsPath + " has labels above 9; expected 10 classes");
    }
    TensorDataset split;
    split.inputs = images.unsqueeze(1).to(torch::kFloat32).div_(255.0).sub_(kPixelMean).div_(kPixelStd);
    split.targets = labels.to(torch::kInt64);
    return split;
}

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

std::string dataFolder(const std::string& data)
{
    const std::string dir = data == "fashion-mnist" ? kFashionMnistDir : data;
    if (!std::filesystem::is_directory(dir)) {
        throw UsageError("--data " + data + ": folder " + dir + " does not exist" +
                         (data == "fashion-mnist" ? " (install the dataset-fashion-mnist package)"
                                                  : " (give fashion-mnist or a folder of MNIST-format IDX files)"));
    }
    return dir;
}

} // namespace

std::int64_t verifyImageClassification(const std::string& data)
{
    const auto dir = dataFolder(data);
    std::int64_t trainSamples = 0;
    for (const std::string prefix : {"train", "t10k"}) {
        const auto imagesPath = findIdx(dir, prefix + "-images-idx3-ubyte");
        const auto labelsPath = findIdx(dir, prefix + "-labels-idx1-ubyte");
        GzFile images(imagesPath);
        GzFile labels(labelsPath);
        if (!images.handle || !labels.handle) throw UsageError("cannot open the IDX files in " + dir);
        const auto imageShape = readIdxHeader(images, imagesPath, 3);
        const auto labelShape = readIdxHeader(labels, labelsPath, 1);
        if (imageShape[0] != labelShape[0]) {
            throw UsageError("--data " + data + ": " + imagesPath + " and " + labelsPath + " disagree on the sample count");
        }
        if (prefix == "train") trainSamples = imageShape[0];
    }
    return trainSamples;
}

torch::Tensor readIdxFile(const std::string& path, int expectedDims)
{
    GzFile file(path);
    if (!file.handle) {
        throw UsageError("cannot open " + path + ": check that it exists and is readable");
    }
    const auto shape = readIdxHeader(file, path, expectedDims);
    std::int64_t total = 1;
    for (const auto dim : shape) total *= dim;
    if (total <= 0 || total > (std::int64_t(1) << 34)) {
        throw UsageError(path + " declares an implausible shape (corrupt file)");
    }
    auto tensor = torch::empty(shape, torch::kUInt8);
    if (!file.read(tensor.data_ptr(), static_cast<std::size_t>(total))) {
        throw UsageError(path + " is truncated: its header promises " + std::to_string(total) + " bytes of data");
    }
    return tensor;
}

DataSplits loadImageClassification(const std::string& data)
{
    const auto dir = dataFolder(data);
    DataSplits splits;
    splits.train = loadSplit(dir, "train");
    splits.test = loadSplit(dir, "t10k");
    const auto& shape = splits.train.inputs.sizes();
    if (shape.size() != 4 || shape[2] != 28 || shape[3] != 28) {
        throw UsageError("--data " + data + ": images must be 28x28 for the built-in models");
    }
    splits.description = dir + " (" + std::to_string(splits.train.size()) + " train, " +
                         std::to_string(splits.test.size()) + " test)";
    return splits;
}

DataSplits makeSyntheticRegression(std::int64_t samples, std::uint64_t seed)
{
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto trueWeights = torch::arange(1, 11, torch::kFloat32).div_(10.0).unsqueeze(1); // 0.1 .. 1.0
    const double trueBias = 0.5;
    auto make = [&](std::int64_t n) {
        TensorDataset split;
        split.inputs = torch::randn({n, 10}, generator, torch::kFloat32);
        split.targets = split.inputs.mm(trueWeights).add_(trueBias).add_(torch::randn({n, 1}, generator).mul_(0.01));
        return split;
    };
    DataSplits splits;
    splits.train = make(samples);
    splits.test = make(std::max<std::int64_t>(samples / 4, 1));
    splits.description = "synthetic regression (" + std::to_string(samples) + " train samples)";
    return splits;
}

} // namespace ringmaster::trainer
