// Loads one dataset with the trainer's readers (core/trainer/data/), for the Python reader tests:
//   ringmaster-data-probe image-folder DIR [H,W] [--classes A,B,...] [--dump PREFIX]
//   ringmaster-data-probe tensor-file PATH [--dump PREFIX]
//   ringmaster-data-probe csv PATH [LABEL_COLUMN] [--classes A,B,...] [--dump PREFIX]
// Prints one JSON object: inputs_shape, inputs_dtype, targets_shape, targets_dtype (torch's names,
// e.g. "uint8"), classes, description. With --dump it also writes the tensors' raw little-endian bytes,
// C-contiguous, to PREFIX.inputs and PREFIX.targets. --classes gives the training split's class names
// (a validation folder or file). A UsageError prints "error: MESSAGE" on stderr and exits 2.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "trainer/data/csv_table.h"
#include "trainer/data/image_folder.h"
#include "trainer/data/tensor_file.h"
#include "trainer/errors.h"

namespace rt = ringmaster::trainer;

namespace {

constexpr const char* kFlag = "--data";

std::string dtypeName(const torch::Tensor& tensor)
{
    switch (tensor.scalar_type()) {
    case torch::kUInt8: return "uint8";
    case torch::kFloat32: return "float32";
    case torch::kInt64: return "int64";
    default: return c10::toString(tensor.scalar_type());
    }
}

std::vector<std::string> splitCommas(const std::string& text)
{
    std::vector<std::string> parts;
    std::stringstream stream(text);
    for (std::string part; std::getline(stream, part, ',');) parts.push_back(part);
    return parts;
}

rt::ImageSize parseSize(const std::string& text)
{
    const auto parts = splitCommas(text);
    if (parts.size() != 2) throw rt::UsageError("image size must be H,W, got " + text);
    return {std::stoll(parts[0]), std::stoll(parts[1])};
}

void dump(const torch::Tensor& tensor, const std::string& path)
{
    const auto contiguous = tensor.contiguous();
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char*>(contiguous.data_ptr()), static_cast<std::streamsize>(contiguous.nbytes()));
    if (!out) throw std::runtime_error("cannot write " + path);
}

int usage(const char* program)
{
    std::fprintf(stderr,
                 "usage: %s image-folder DIR [H,W] [--classes A,B] [--dump PREFIX]\n"
                 "       %s tensor-file PATH [--dump PREFIX]\n"
                 "       %s csv PATH [LABEL_COLUMN] [--classes A,B] [--dump PREFIX]\n",
                 program, program, program);
    return rt::kExitUsage;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> positional;
    std::vector<std::string> classes;
    std::string dumpPrefix;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--classes" && i + 1 < argc) {
            classes = splitCommas(argv[++i]);
        } else if (arg == "--dump" && i + 1 < argc) {
            dumpPrefix = argv[++i];
        } else {
            positional.push_back(arg);
        }
    }
    if (positional.size() < 2 || positional.size() > 3) return usage(argv[0]);
    const std::string& kind = positional[0];
    const std::string& path = positional[1];
    const std::string extra = positional.size() == 3 ? positional[2] : "";
    try {
        rt::LoadedData data;
        if (kind == "image-folder") {
            data = rt::readImageFolder(path, extra.empty() ? rt::ImageSize{} : parseSize(extra), kFlag, classes);
        } else if (kind == "tensor-file" && extra.empty()) {
            data = rt::readTensorFile(path, kFlag);
        } else if (kind == "csv") {
            data = rt::readCsvTable(path, extra, kFlag, classes);
        } else {
            return usage(argv[0]);
        }
        nlohmann::json report{{"inputs_shape", data.inputs.sizes().vec()},
                              {"inputs_dtype", dtypeName(data.inputs)},
                              {"targets_shape", data.targets.sizes().vec()},
                              {"targets_dtype", dtypeName(data.targets)},
                              {"classes", data.classNames},
                              {"description", data.description}};
        if (!dumpPrefix.empty()) {
            dump(data.inputs, dumpPrefix + ".inputs");
            dump(data.targets, dumpPrefix + ".targets");
        }
        std::cout << report.dump() << std::endl;
        return rt::kExitOk;
    } catch (const rt::UsageError& error) {
        std::cerr << "error: " << error.what() << std::endl;
        return rt::kExitUsage;
    } catch (const std::exception& error) {
        std::cerr << "unexpected error: " << rt::oneLineMessage(error) << std::endl;
        return rt::kExitFailure;
    }
}
