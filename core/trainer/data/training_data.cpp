#include "trainer/data/training_data.h"

#include <ATen/CPUGeneratorImpl.h>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "trainer/errors.h"
#include "trainer/log.h"
#include "trainer/data/csv_table.h"
#include "trainer/data/idx_folder.h"
#include "trainer/data/image_folder.h"
#include "trainer/data/shared_cache.h"
#include "trainer/data/synthetic.h"
#include "trainer/data/tensor_file.h"

namespace fs = std::filesystem;

namespace ringmaster::trainer {
namespace {

constexpr std::int64_t kStatsChunk = 4096; // samples per chunk while summing pixel statistics
// Part of every cache key: bump it when a reader's output changes for the same files and options.
constexpr const char* kReaderVersion = "1";

struct Source
{
    DataFormat format;
    std::string path;
};

std::string lower(std::string text)
{
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
    return text;
}

Source detect(const std::string& data, const std::string& flag)
{
    if (data == kSyntheticName) return {DataFormat::Synthetic, ""};
    const std::string path = idxFolderPath(data);
    std::error_code error;
    if (fs::is_directory(path, error)) {
        if (looksLikeIdxFolder(path)) return {DataFormat::Idx, path};
        if (looksLikeImageFolder(path)) return {DataFormat::ImageFolder, path};
        throw UsageError(flag + " " + data + ": the folder holds neither MNIST-format IDX files (train-images-idx3-ubyte) "
                         "nor class sub-folders of images (torchvision's ImageFolder layout)");
    }
    if (fs::is_regular_file(path, error)) {
        return {lower(fs::path(path).extension().string()) == ".csv" ? DataFormat::Csv : DataFormat::TensorFile, path};
    }
    if (data == kFashionMnistName) {
        throw UsageError(flag + " fashion-mnist: folder " + path + " does not exist (install the dataset-fashion-mnist package)");
    }
    throw UsageError(flag + " " + data + ": no such file or folder (give fashion-mnist, synthetic, an IDX or image "
                     "folder, a .csv file or a torch.save tensor file)");
}

LoadedData readUncached(const Source& source, const DataOptions& options, const std::string& flag,
                        const std::string& idxSplit, const std::vector<std::string>& classes)
{
    switch (source.format) {
    case DataFormat::Idx: return readIdxSplit(source.path, idxSplit, flag);
    case DataFormat::ImageFolder: return readImageFolder(source.path, options.imageSize, flag, classes);
    case DataFormat::TensorFile: return readTensorFile(source.path, flag);
    case DataFormat::Csv: return readCsvTable(source.path, options.labelColumn, flag, classes);
    case DataFormat::Synthetic: break;
    }
    throw UsageError(flag + ": the synthetic set has no files to read");
}

// Through the per-machine cache (shared_cache.h): decoded once, then mapped by every local rank and
// by later runs while the source is unchanged. A cache that cannot be written is not an error: the
// data is then read into this process's memory, with a warning.
LoadedData read(const Source& source, const DataOptions& options, const std::string& flag, const std::string& idxSplit,
                const std::vector<std::string>& classes)
{
    auto build = [&] { return readUncached(source, options, flag, idxSplit, classes); };
    const std::string dir = options.cacheDir.empty() ? defaultDataCacheDir() : options.cacheDir;
    if (dir == "off") return build();
    std::string key = std::string("reader=") + kReaderVersion + ";format=" + formatName(source.format) +
                      ";split=" + idxSplit + ";image-size=" + std::to_string(options.imageSize.height) + "," +
                      std::to_string(options.imageSize.width) + ";label-column=" + options.labelColumn + ";classes=";
    for (const auto& name : classes) key += name + "\x1f";
    try {
        return mapOrBuildCache(dir, dataFingerprint(source.path, key), build).data;
    } catch (const IoError& e) {
        log::warn("{}: reading {} without the data cache", oneLineMessage(e), source.path);
        return build();
    }
}

DataSplit wholeSplit(const LoadedData& data)
{
    return DataSplit{data.inputs, data.targets, {}};
}

std::string shapeText(const std::vector<std::int64_t>& shape)
{
    std::string text;
    for (const auto dim : shape) text += (text.empty() ? "" : "x") + std::to_string(dim);
    return text.empty() ? "scalar" : text;
}

std::vector<std::int64_t> sampleShapeOf(const torch::Tensor& inputs)
{
    return std::vector<std::int64_t>(inputs.sizes().begin() + 1, inputs.sizes().end());
}

// Labels must be classes of the training split: 0 <= label < classes.
void requireLabelsInRange(const torch::Tensor& targets, std::int64_t classes, const std::string& what)
{
    if (targets.numel() == 0) return;
    const auto low = targets.min().item<std::int64_t>();
    const auto high = targets.max().item<std::int64_t>();
    if (low < 0 || high >= classes) {
        throw UsageError(what + ": labels out of range: found " + std::to_string(low < 0 ? low : high) +
                         ", but the training data has " + std::to_string(classes) + " classes (0.." +
                         std::to_string(classes - 1) + ")");
    }
}

// Per-channel mean and standard deviation of uint8 images scaled to [0, 1], over the split's rows.
// Integer sums are exact, so every rank (whatever its thread count) gets bit-identical statistics.
void computePixelStats(const DataSplit& split, std::vector<double>& mean, std::vector<double>& stdev)
{
    const auto channels = split.inputs.size(1);
    std::vector<long double> sum(channels, 0), squares(channels, 0);
    const auto n = split.size();
    for (std::int64_t begin = 0; begin < n; begin += kStatsChunk) {
        const auto count = std::min(kStatsChunk, n - begin);
        const auto indices = torch::arange(begin, begin + count, torch::kLong);
        const auto chunk = split.rawInputsAt(indices).to(torch::kInt64).transpose(0, 1).reshape({channels, -1});
        const auto sums = chunk.sum(1);
        const auto sumSquares = chunk.mul(chunk).sum(1);
        for (std::int64_t c = 0; c < channels; ++c) {
            sum[c] += static_cast<long double>(sums[c].item<std::int64_t>());
            squares[c] += static_cast<long double>(sumSquares[c].item<std::int64_t>());
        }
    }
    const long double values = static_cast<long double>(n) * static_cast<long double>(split.inputs[0][0].numel());
    for (std::int64_t c = 0; c < channels; ++c) {
        const long double m = sum[c] / values / 255.0L;
        const long double meanSquare = squares[c] / values / (255.0L * 255.0L);
        mean.push_back(static_cast<double>(m));
        stdev.push_back(static_cast<double>(std::sqrt(std::max(meanSquare - m * m, 0.0L))));
    }
}

void chooseNormalization(TrainingData& data, const DataOptions& options)
{
    const bool images = data.format == DataFormat::Idx || data.format == DataFormat::ImageFolder;
    data.scaleToUnit = images;
    if (options.normalize == "none") return;
    if (options.normalize == "auto") {
        if (!images) return; // tensor files and CSV are used as given
        if (data.path == kFashionMnistDir) {
            data.mean = {kFashionMnistMean};
            data.std = {kFashionMnistStd};
            data.normalization = "documented";
        } else {
            computePixelStats(data.train, data.mean, data.std);
            for (auto& s : data.std) s = std::max(s, 1e-6); // a constant channel: centre it, do not divide by 0
            data.normalization = "computed";
        }
        return;
    }
    std::vector<double> values;
    std::stringstream in(options.normalize);
    for (std::string item; std::getline(in, item, ',');) {
        char* end = nullptr;
        const double value = std::strtod(item.c_str(), &end);
        if (item.empty() || *end != '\0' || !std::isfinite(value)) {
            throw UsageError("--normalize " + options.normalize + ": '" + item + "' is not a number (give auto, none, "
                             "MEAN,STD or one mean per channel then one std per channel)");
        }
        values.push_back(value);
    }
    const auto channels = data.sampleShape.empty() ? 1 : data.sampleShape[0];
    if (values.size() != 2 && values.size() != static_cast<std::size_t>(2 * channels)) {
        throw UsageError("--normalize " + options.normalize + ": give MEAN,STD or " + std::to_string(channels) +
                         " means then " + std::to_string(channels) + " stds (the inputs have " +
                         std::to_string(channels) + " channels)");
    }
    const auto half = values.size() / 2;
    data.mean.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(half));
    data.std.assign(values.begin() + static_cast<std::ptrdiff_t>(half), values.end());
    for (const double s : data.std) {
        if (!(s > 0.0)) throw UsageError("--normalize " + options.normalize + ": every std must be > 0");
    }
    data.normalization = "given";
}

std::string describe(const TrainingData& data)
{
    std::string text = std::string(formatName(data.format)) + (data.path.empty() ? "" : " " + data.path) + " (" +
                       std::to_string(data.train.size()) + " train";
    if (data.val.size() > 0) text += ", " + std::to_string(data.val.size()) + " val from " + data.valSource;
    text += ", " + (data.classCount > 0 ? std::to_string(data.classCount) + " classes" : std::string("float targets")) +
            ", input " + shapeText(data.sampleShape) + ")";
    return text;
}

} // namespace

const char* formatName(DataFormat format)
{
    switch (format) {
    case DataFormat::Idx: return "idx";
    case DataFormat::ImageFolder: return "image-folder";
    case DataFormat::TensorFile: return "tensor-file";
    case DataFormat::Csv: return "csv";
    case DataFormat::Synthetic: return "synthetic";
    }
    return "?";
}

std::int64_t DataSplit::size() const
{
    if (rows.defined()) return rows.size(0);
    return inputs.defined() ? inputs.size(0) : 0;
}

namespace {

torch::Tensor gather(const torch::Tensor& source, const torch::Tensor& rows, bool pinned)
{
    if (!pinned) return source.index_select(0, rows);
    auto sizes = source.sizes().vec();
    sizes[0] = rows.size(0);
    auto out = torch::empty(sizes, source.options().pinned_memory(true));
    return torch::index_select_out(out, source, 0, rows);
}

torch::Tensor perChannel(const std::vector<double>& values, std::int64_t dims, const torch::Device& device)
{
    std::vector<std::int64_t> shape(static_cast<std::size_t>(dims), 1);
    shape[1] = static_cast<std::int64_t>(values.size());
    const auto options = torch::TensorOptions().dtype(torch::kFloat32);
    return torch::tensor(std::vector<float>(values.begin(), values.end()), options).view(shape).to(device);
}

} // namespace

torch::Tensor DataSplit::targetsAt(const torch::Tensor& indices, bool pinned) const
{
    return gather(targets, rows.defined() ? rows.index_select(0, indices) : indices, pinned);
}

torch::Tensor DataSplit::rawInputsAt(const torch::Tensor& indices, bool pinned) const
{
    return gather(inputs, rows.defined() ? rows.index_select(0, indices) : indices, pinned);
}

torch::Tensor TrainingData::inputsAt(const DataSplit& split, const torch::Tensor& indices) const
{
    // gather copies, so the in-place steps below never touch the (possibly shared) source.
    auto x = split.rawInputsAt(indices, streamsToDevice());
    if (streamsToDevice()) x = x.to(m_batchDevice, /*non_blocking=*/true);
    x = x.to(torch::kFloat32);
    if (scaleToUnit) x.div_(255.0);
    if (mean.size() == 1) {
        x.sub_(mean[0]).div_(std[0]);
    } else if (!mean.empty()) {
        const bool ready = m_meanTensor.defined() && m_meanTensor.dim() == x.dim() && m_meanTensor.device() == x.device();
        x.sub_(ready ? m_meanTensor : perChannel(mean, x.dim(), x.device()))
            .div_(ready ? m_stdTensor : perChannel(std, x.dim(), x.device()));
    }
    return x;
}

torch::Tensor TrainingData::batchTargetsAt(const DataSplit& split, const torch::Tensor& indices) const
{
    auto y = split.targetsAt(indices, streamsToDevice());
    return streamsToDevice() ? y.to(m_batchDevice, /*non_blocking=*/true) : y;
}

void TrainingData::targetsToFloat()
{
    for (auto* split : {&train, &val}) {
        if (!split->targets.defined()) continue;
        split->targets = split->targets.to(torch::kFloat32);
        if (split->targets.dim() == 1) split->targets = split->targets.unsqueeze(1);
    }
    classCount = 0;
}

void TrainingData::placeOn(const torch::Device& device, bool resident)
{
    m_batchDevice = device;
    if (resident && device != dataDevice()) {
        // A held-out split shares the training split's tensors: they move once, not twice.
        const bool sharedInputs = val.inputs.defined() && val.inputs.is_same(train.inputs);
        const bool sharedTargets = val.targets.defined() && val.targets.is_same(train.targets);
        auto move = [&](torch::Tensor& tensor) {
            if (tensor.defined()) tensor = tensor.to(device);
        };
        move(train.inputs);
        move(train.targets);
        move(train.rows);
        if (sharedInputs) val.inputs = train.inputs; else move(val.inputs);
        if (sharedTargets) val.targets = train.targets; else move(val.targets);
        move(val.rows);
    }
    if (mean.size() > 1 && train.inputs.defined()) {
        m_meanTensor = perChannel(mean, train.inputs.dim(), device);
        m_stdTensor = perChannel(std, train.inputs.dim(), device);
    }
}

torch::Device TrainingData::dataDevice() const
{
    return train.inputs.defined() ? train.inputs.device() : torch::Device(torch::kCPU);
}

std::int64_t TrainingData::compactBytes() const
{
    std::int64_t bytes = 0;
    for (const auto* tensor : {&train.inputs, &train.targets, &val.inputs, &val.targets}) {
        if (tensor->defined()) bytes += static_cast<std::int64_t>(tensor->nbytes());
    }
    if (val.inputs.defined() && val.inputs.is_same(train.inputs)) bytes -= static_cast<std::int64_t>(val.inputs.nbytes());
    if (val.targets.defined() && val.targets.is_same(train.targets)) bytes -= static_cast<std::int64_t>(val.targets.nbytes());
    return bytes;
}

ImageSize parseImageSize(const std::string& text)
{
    if (text.empty()) return {};
    ImageSize size;
    char comma = 0;
    char rest = 0;
    std::istringstream in(text);
    if (!(in >> size.height >> comma >> size.width) || comma != ',' || (in >> rest) || size.height < 1 ||
        size.width < 1 || size.height > 65536 || size.width > 65536) {
        throw UsageError("--image-size " + text + ": give HEIGHT,WIDTH in pixels, e.g. 32,32");
    }
    return size;
}

TrainingData loadTrainingData(const DataOptions& options)
{
    TrainingData data;
    const Source source = detect(options.data, "--data");
    data.format = source.format;
    data.path = source.path;
    LoadedData train;
    LoadedData test; // the source's own test split (IDX t10k, the synthetic test set)
    if (source.format == DataFormat::Synthetic) {
        std::tie(train, test) = makeSyntheticRegression(options.syntheticSamples, options.seed);
    } else {
        train = read(source, options, "--data", "train", {});
        if (source.format == DataFormat::Idx && options.valData.empty() && options.valSplit <= 0.0) {
            test = read(source, options, "--data", "t10k", {});
        }
    }
    if (train.size() == 0) throw UsageError("--data " + options.data + ": holds no samples");
    data.classNames = train.classNames;
    data.sampleShape = sampleShapeOf(train.inputs);
    data.train = wholeSplit(train);

    if (!options.valData.empty()) {
        const Source valSource = detect(options.valData, "--val-data");
        if (valSource.format == DataFormat::Synthetic) throw UsageError("--val-data synthetic: give a file or folder");
        const LoadedData val = read(valSource, options, "--val-data", "t10k", train.classNames);
        if (sampleShapeOf(val.inputs) != data.sampleShape) {
            throw UsageError("--val-data " + options.valData + ": samples are " + shapeText(sampleShapeOf(val.inputs)) +
                             " but the training samples are " + shapeText(data.sampleShape));
        }
        if (val.targets.is_floating_point() != train.targets.is_floating_point()) {
            throw UsageError("--val-data " + options.valData + ": its labels are " +
                             (val.targets.is_floating_point() ? "float targets" : "class labels") +
                             " but the training data's are " +
                             (train.targets.is_floating_point() ? "float targets" : "class labels"));
        }
        data.val = wholeSplit(val);
        data.valSource = "file";
    } else if (options.valSplit > 0.0) {
        const auto n = train.size();
        const auto held = static_cast<std::int64_t>(std::floor(options.valSplit * static_cast<double>(n)));
        if (held < 1 || held >= n) {
            throw UsageError("--val-split " + std::to_string(options.valSplit) + " of " + std::to_string(n) +
                             " samples holds out " + std::to_string(held) + ": choose a fraction that leaves samples on both sides");
        }
        // torch.utils.data.random_split(data, [n - held, held], generator=torch.Generator().manual_seed(seed)).
        auto generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
        const auto permutation = torch::randperm(n, generator, torch::kLong);
        data.train.rows = permutation.narrow(0, 0, n - held).clone();
        data.val = DataSplit{train.inputs, train.targets, permutation.narrow(0, n - held, held).clone()};
        data.valSource = "split";
    } else if (test.size() > 0) {
        data.val = wholeSplit(test);
        data.valSource = "test-split";
    }

    if (!train.targets.is_floating_point()) {
        data.classCount = data.classNames.empty() ? train.targets.max().item<std::int64_t>() + 1
                                                  : static_cast<std::int64_t>(data.classNames.size());
        requireLabelsInRange(train.targets, data.classCount, "--data " + options.data);
        if (data.val.size() > 0 && data.valSource != "split") {
            requireLabelsInRange(data.val.targets, data.classCount,
                                 (data.valSource == "file" ? "--val-data " + options.valData : "--data " + options.data) +
                                     " (validation split)");
        }
    } else {
        for (auto* split : {&data.train, &data.val}) {
            if (split->targets.defined() && split->targets.dim() == 1) split->targets = split->targets.unsqueeze(1);
        }
    }
    chooseNormalization(data, options);
    data.description = describe(data);
    return data;
}

} // namespace ringmaster::trainer
