// Fuzz target: MNIST-format IDX folders (core/trainer/data/idx_folder.h), the format of --data IDX_DIR and of
// the built-in Fashion-MNIST. The input is split in two at fuzz_support.h's separator: the images file and the
// labels file of a "train" split, written to a scratch folder (gzip'd when they start with gzip's magic, as the
// reader decides by content) and read with readIdxSplit; each part is also read alone with readIdxFile.
// Must hold: a corrupt, truncated or disagreeing file gives a UsageError naming it and nothing else escapes; a
// split that loads has as many labels as images, images uint8 [N, 1, H, W]; memory stays bounded by what the
// files can hold (a 16-byte header must not make the reader allocate what it declares); no crash, no leak.
#include <cstdint>
#include <string>

#include "trainer/data/idx_folder.h"
#include "trainer/errors.h"
#include "fuzz_support.h"

using namespace ringmaster::trainer;
namespace fuzz = ringmaster::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const auto parts = fuzz::splitInTwo(fuzz::asText(data, size));
    const std::string dir = fuzz::freshScratchFolder("idx");
    const std::string images = fuzz::writeScratchFile("idx/train-images-idx3-ubyte", parts[0]);
    const std::string labels = fuzz::writeScratchFile("idx/train-labels-idx1-ubyte", parts[1]);
    try {
        const LoadedData split = readIdxSplit(dir, "train", "--data");
        FUZZ_CHECK(split.inputs.dim() == 4 && split.inputs.size(1) == 1);
        FUZZ_CHECK(split.inputs.scalar_type() == torch::kUInt8);
        FUZZ_CHECK(split.targets.dim() == 1 && split.targets.size(0) == split.inputs.size(0));
    } catch (const UsageError& error) {
        FUZZ_CHECK(std::string(error.what()).find(dir) != std::string::npos); // names the folder or its file
    }
    for (const auto& [path, dims] : {std::pair<std::string, int>{images, 3}, {labels, 1}}) {
        try {
            const torch::Tensor tensor = readIdxFile(path, dims);
            FUZZ_CHECK(tensor.dim() == dims && tensor.numel() > 0);
        } catch (const UsageError& error) {
            FUZZ_CHECK(std::string(error.what()).find(path) != std::string::npos);
        }
    }
    return 0;
}
