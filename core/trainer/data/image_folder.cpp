// Image folders: find the class folders and their images, read every image's header (in parallel) to
// learn the channel count and the size, then decode (in parallel) straight into one preallocated uint8
// [N, C, H, W] tensor. The decoding itself is image_decode.cpp (libpng and libjpeg-turbo; it says why).
//
// Resizing (--image-size H,W) is bilinear with antialiasing, align_corners=false, computed in float32
// by torch::nn::functional::interpolate exactly as Python's
//   F.interpolate(x.float()[None], size=(H, W), mode="bilinear", align_corners=False, antialias=True)
// and rounded half-to-even (torch.round) back to uint8. An image already of the target size is copied.
#include "trainer/data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <ATen/Parallel.h>

#include "trainer/errors.h"
#include "trainer/data/image_decode.h"

namespace ringmaster::trainer {
namespace {

namespace fs = std::filesystem;
namespace F = torch::nn::functional;

constexpr std::uint8_t kMaxPixelValue = 255;

struct ImageEntry
{
    std::string path;
    std::int64_t label = 0;
    ImageFormat format = ImageFormat::Png;
};

bool isHidden(const fs::path& path)
{
    const std::string name = path.filename().string();
    return !name.empty() && name[0] == '.';
}

std::optional<ImageFormat> imageFormatOf(const fs::path& path)
{
    std::string extension = path.extension().string();
    std::transform(extension.begin(), extension.end(), extension.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (extension == ".png") return ImageFormat::Png;
    if (extension == ".jpg" || extension == ".jpeg") return ImageFormat::Jpeg;
    return std::nullopt;
}

// Sorted names of the visible entries of `dir` for which `keep` holds.
template <typename Predicate>
std::vector<std::string> sortedNames(const std::string& dir, Predicate keep)
{
    std::vector<std::string> names;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
        if (!isHidden(entry.path()) && keep(entry)) names.push_back(entry.path().filename().string());
    }
    if (error) throw UsageError("cannot list " + dir + ": " + error.message());
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string> classFolders(const std::string& dir)
{
    return sortedNames(dir, [](const fs::directory_entry& entry) {
        std::error_code error;
        return entry.is_directory(error);
    });
}

std::string joinNames(const std::vector<std::string>& names)
{
    std::string joined;
    for (const auto& name : names) joined += (joined.empty() ? "" : ", ") + name;
    return joined;
}

std::vector<ImageEntry> listImages(const std::string& dir, const std::vector<std::string>& folders,
                                   const std::vector<std::string>& classes, const std::string& prefix)
{
    std::vector<ImageEntry> entries;
    for (std::size_t folderIndex = 0; folderIndex < folders.size(); ++folderIndex) {
        const std::string& folder = folders[folderIndex];
        std::int64_t label = static_cast<std::int64_t>(folderIndex);
        if (!classes.empty()) {
            const auto found = std::find(classes.begin(), classes.end(), folder);
            if (found == classes.end()) {
                throw UsageError(prefix + "class folder " + folder + " is not one of the training classes (" +
                                 joinNames(classes) + ")");
            }
            label = found - classes.begin();
        }
        const std::string folderPath = (fs::path(dir) / folder).string();
        const auto files = sortedNames(folderPath, [](const fs::directory_entry& entry) {
            std::error_code error;
            return entry.is_regular_file(error) && imageFormatOf(entry.path()).has_value();
        });
        if (files.empty()) {
            throw UsageError(prefix + "class folder " + folderPath +
                             " has no .png, .jpg or .jpeg images (remove it or add its images)");
        }
        for (const auto& file : files) {
            const fs::path path = fs::path(folderPath) / file;
            entries.push_back({path.string(), label, *imageFormatOf(path)});
        }
    }
    return entries;
}

std::string readBytes(const std::string& path, std::vector<std::uint8_t>& bytes)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::string("cannot open it: ") + std::strerror(errno);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) return std::string("cannot read it: ") + std::strerror(errno);
    return {};
}

DecodeResult decodeFile(const ImageEntry& entry, bool headerOnly)
{
    std::vector<std::uint8_t> bytes;
    DecodeResult result;
    result.error = readBytes(entry.path, bytes);
    if (result.error.empty()) result = decodeImage(bytes.data(), bytes.size(), entry.format, headerOnly);
    return result;
}

// Runs `work(i)` for i in [0, count) on LibTorch's intra-op threads. Each call reports its failure as a
// message (nothing is thrown across threads); the first failure in file order is thrown afterwards, so
// the error does not depend on thread timing.
template <typename Work>
void forEachImage(const std::vector<ImageEntry>& entries, const std::string& prefix, Work work)
{
    std::vector<std::string> errors(entries.size());
    at::parallel_for(0, static_cast<std::int64_t>(entries.size()), 1, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i) {
            try {
                errors[i] = work(i);
            } catch (const std::exception& error) {
                errors[i] = oneLineMessage(error);
            }
        }
    });
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (!errors[i].empty()) throw UsageError(prefix + "image " + entries[i].path + ": " + errors[i]);
    }
}

std::string sizeText(const DecodedImage& image)
{
    return std::to_string(image.height) + "x" + std::to_string(image.width);
}

// Writes one decoded image into its [C, H, W] slot: channels first, grey replicated when C is 3,
// resized when its size differs from the slot's.
void storeImage(DecodedImage& image, torch::Tensor slot)
{
    const auto channels = slot.size(0);
    const auto height = slot.size(1);
    const auto width = slot.size(2);
    auto chw = torch::from_blob(image.pixels.data(), {image.height, image.width, image.channels}, torch::kUInt8)
                   .permute({2, 0, 1});
    if (image.height != height || image.width != width) {
        auto resized = F::interpolate(chw.to(torch::kFloat32).unsqueeze(0),
                                      F::InterpolateFuncOptions()
                                          .size(std::vector<std::int64_t>{height, width})
                                          .mode(torch::kBilinear)
                                          .align_corners(false)
                                          .antialias(true));
        chw = resized.squeeze(0).round_().clamp_(0, kMaxPixelValue).to(torch::kUInt8);
    }
    slot.copy_(chw.expand({channels, height, width}));
}

} // namespace

bool looksLikeImageFolder(const std::string& dir)
{
    std::error_code error;
    if (!fs::is_directory(dir, error)) return false;
    try {
        return !classFolders(dir).empty();
    } catch (const UsageError&) {
        return false;
    }
}

LoadedData readImageFolder(const std::string& dir, ImageSize size, const std::string& flag,
                           const std::vector<std::string>& classes)
{
    const std::string prefix = flag + " " + dir + ": ";
    std::error_code error;
    if (!fs::is_directory(dir, error)) throw UsageError(prefix + "folder does not exist");
    const auto folders = classFolders(dir);
    if (folders.empty()) {
        throw UsageError(prefix + "no class folders; an image folder holds one sub-folder per class "
                                  "(DIR/<class>/<image>.png|.jpg|.jpeg)");
    }
    const auto entries = listImages(dir, folders, classes, prefix);
    const auto count = static_cast<std::int64_t>(entries.size());

    std::vector<DecodedImage> headers(entries.size());
    forEachImage(entries, prefix, [&](std::int64_t i) {
        auto result = decodeFile(entries[i], /*headerOnly=*/true);
        headers[i] = result.image;
        return result.error;
    });
    const bool allGrey = std::all_of(headers.begin(), headers.end(), [](const auto& h) { return h.channels == 1; });
    const std::int64_t channels = allGrey ? 1 : 3;
    std::int64_t height = size.height;
    std::int64_t width = size.width;
    if (!size.resizes()) {
        height = headers[0].height;
        width = headers[0].width;
        for (std::size_t i = 1; i < headers.size(); ++i) {
            if (headers[i].height != height || headers[i].width != width) {
                throw UsageError(prefix + "image " + entries[i].path + " is " + sizeText(headers[i]) + " (HxW) but " +
                                 entries[0].path + " is " + sizeText(headers[0]) +
                                 "; give --image-size H,W to resize every image");
            }
        }
    }

    LoadedData data;
    data.inputs = torch::empty({count, channels, height, width}, torch::kUInt8);
    data.targets = torch::empty({count}, torch::kInt64);
    auto* labels = data.targets.data_ptr<std::int64_t>();
    forEachImage(entries, prefix, [&](std::int64_t i) {
        auto result = decodeFile(entries[i], /*headerOnly=*/false);
        if (!result.error.empty()) return result.error;
        if (!size.resizes() && (result.image.height != height || result.image.width != width)) {
            return "changed size while being read (now " + sizeText(result.image) + ")";
        }
        storeImage(result.image, data.inputs[i]);
        labels[i] = entries[i].label;
        return std::string();
    });
    data.classNames = classes.empty() ? folders : classes;
    data.description = "image folder " + dir + " (" + std::to_string(count) + " images, " +
                       std::to_string(data.classNames.size()) + " classes, " + std::to_string(channels) + "x" +
                       std::to_string(height) + "x" + std::to_string(width) +
                       (size.resizes() ? ", resized" : "") + ")";
    return data;
}

} // namespace ringmaster::trainer
