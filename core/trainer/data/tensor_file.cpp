// Tensor files: torch::pickle_load (torch/serialize.h) reads the zip archive that Python's torch.save
// writes by default since PyTorch 1.6 (data.pkl plus one record per storage, through
// caffe2::serialize::PyTorchStreamReader). The legacy format (_use_new_zipfile_serialization=False, a
// bare pickle stream) is not readable from C++; it is recognised by its first byte and refused with the
// one-line re-save recipe. Every record's CRC-32 is checked first (zip_records.h): LibTorch checks none.
#include "trainer/data/tensor_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "trainer/errors.h"
#include "trainer/zip_records.h"

namespace ringmaster::trainer {
namespace {

// A zip archive's local file header; a legacy torch.save stream starts with pickle's PROTO opcode.
constexpr char kZipMagic[] = {'P', 'K', '\x03', '\x04'};
constexpr unsigned char kPickleProtoOpcode = 0x80;
constexpr const char* kSaveRecipe = "save it in Python with torch.save({\"x\": X, \"y\": Y}, path)";

std::vector<char> readWholeFile(const std::string& path, const std::string& prefix)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(prefix + "cannot open it: " + std::strerror(errno));
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw UsageError(prefix + "cannot read it: " + std::strerror(errno));
    return bytes;
}

bool startsWithZipMagic(const std::vector<char>& bytes)
{
    return bytes.size() >= sizeof kZipMagic && std::memcmp(bytes.data(), kZipMagic, sizeof kZipMagic) == 0;
}

c10::IValue loadPickle(const std::vector<char>& bytes, const std::string& prefix)
{
    if (!startsWithZipMagic(bytes)) {
        if (!bytes.empty() && static_cast<unsigned char>(bytes[0]) == kPickleProtoOpcode) {
            throw UsageError(prefix + "saved in PyTorch's legacy format (_use_new_zipfile_serialization=False), "
                                      "which C++ cannot read; load it in Python and torch.save it again without that option");
        }
        throw UsageError(prefix + "not a file written by torch.save; " + kSaveRecipe);
    }
    // LibTorch compares no CRC: a damaged record would load as garbage, or make its unpickler allocate a length
    // read from the damage (zip_records.h).
    if (const std::string damage = zipRecordDamage(bytes.data(), bytes.size()); !damage.empty()) {
        throw UsageError(prefix + "damaged (" + damage + "); write it again with torch.save({\"x\": X, \"y\": Y}, path)");
    }
    try {
        return torch::pickle_load(bytes);
    } catch (const std::exception& error) {
        throw UsageError(prefix + "cannot be read as a torch.save file (" + oneLineMessage(error) + "); " +
                         kSaveRecipe);
    }
}

torch::Tensor tensorEntry(const c10::impl::GenericDict& dict, const std::string& key, const std::string& prefix)
{
    const auto found = dict.find(c10::IValue(key));
    if (found == dict.end()) {
        throw UsageError(prefix + "has no \"" + key + "\" entry; " + kSaveRecipe);
    }
    if (!found->value().isTensor()) {
        throw UsageError(prefix + "entry \"" + key + "\" is a " + found->value().tagKind() + ", not a tensor");
    }
    return found->value().toTensor();
}

bool isFloating(const torch::Tensor& tensor)
{
    return at::isFloatingType(tensor.scalar_type());
}

bool isInteger(const torch::Tensor& tensor)
{
    return at::isIntegralType(tensor.scalar_type(), /*includeBool=*/false);
}

torch::Tensor checkedInputs(torch::Tensor x, const std::string& prefix)
{
    if (x.dim() < 1) throw UsageError(prefix + "x is a scalar; it needs a first dimension of samples");
    if (x.scalar_type() == torch::kUInt8) return x.contiguous();
    if (!isFloating(x)) {
        throw UsageError(prefix + "x has dtype " + std::string(c10::toString(x.scalar_type())) +
                         "; it must be float32, float64 or uint8");
    }
    x = x.to(torch::kFloat32).contiguous();
    if (!torch::isfinite(x).all().item<bool>()) {
        throw UsageError(prefix + "x holds NaN or infinity (first at flat index " +
                         std::to_string(torch::isfinite(x).logical_not().flatten().nonzero()[0].item<std::int64_t>()) +
                         ")");
    }
    return x;
}

torch::Tensor checkedTargets(torch::Tensor y, const std::string& prefix)
{
    if (isInteger(y)) {
        if (y.dim() != 1) {
            throw UsageError(prefix + "integer y (class labels) must be one-dimensional [N], got " +
                             std::to_string(y.dim()) + " dimensions");
        }
        y = y.to(torch::kInt64).contiguous();
        if (y.numel() > 0 && y.min().item<std::int64_t>() < 0) {
            const auto index = (y < 0).nonzero()[0].item<std::int64_t>();
            throw UsageError(prefix + "y holds a negative class label (" +
                             std::to_string(y[index].item<std::int64_t>()) + " at index " + std::to_string(index) +
                             "); class labels are 0, 1, 2, ...");
        }
        return y;
    }
    if (!isFloating(y)) {
        throw UsageError(prefix + "y has dtype " + std::string(c10::toString(y.scalar_type())) +
                         "; it must be an integer type (class labels) or a float type (targets)");
    }
    if (y.dim() != 1 && y.dim() != 2) {
        throw UsageError(prefix + "float y (targets) must be [N] or [N, K], got " + std::to_string(y.dim()) +
                         " dimensions");
    }
    y = y.to(torch::kFloat32).contiguous();
    if (!torch::isfinite(y).all().item<bool>()) throw UsageError(prefix + "y holds NaN or infinity");
    return y;
}

std::string shapeText(const torch::Tensor& tensor)
{
    std::string text;
    for (const auto dim : tensor.sizes()) text += (text.empty() ? "" : "x") + std::to_string(dim);
    return text;
}

} // namespace

LoadedData readTensorFile(const std::string& path, const std::string& flag)
{
    const std::string prefix = flag + " " + path + ": ";
    const auto loaded = loadPickle(readWholeFile(path, prefix), prefix);
    if (!loaded.isGenericDict()) {
        throw UsageError(prefix + "holds a " + loaded.tagKind() + ", not a dict; " + kSaveRecipe);
    }
    const auto dict = loaded.toGenericDict();
    auto x = tensorEntry(dict, "x", prefix);
    auto y = tensorEntry(dict, "y", prefix);
    if (x.dim() < 1 || y.dim() < 1 || x.size(0) != y.size(0)) {
        throw UsageError(prefix + "x has " + (x.dim() ? std::to_string(x.size(0)) : "no") + " samples but y has " +
                         (y.dim() ? std::to_string(y.size(0)) : "no") + "; their first dimensions must match");
    }
    if (x.size(0) == 0) throw UsageError(prefix + "holds no samples (x and y are empty)");
    LoadedData data;
    data.inputs = checkedInputs(x, prefix);
    data.targets = checkedTargets(y, prefix);
    const bool classes = data.targets.scalar_type() == torch::kInt64;
    data.description = "tensor file " + path + " (" + std::to_string(x.size(0)) + " samples, x " +
                       shapeText(data.inputs) + (data.inputs.scalar_type() == torch::kUInt8 ? " uint8, " : " float32, ") +
                       (classes ? "class labels" : "targets " + shapeText(data.targets)) + ")";
    return data;
}

} // namespace ringmaster::trainer
