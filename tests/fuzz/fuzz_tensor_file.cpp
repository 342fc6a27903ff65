// Fuzz target: tensor files for --data FILE.pt (core/trainer/data/tensor_file.h: torch.save's zip archive,
// read by LibTorch's torch::pickle_load). Writes arbitrary bytes to a .pt in a scratch folder and reads it.
// Must hold: anything but a dict of tensors "x" and "y" that agree gives a UsageError naming the file and
// nothing else escapes; a file that loads has x uint8 or float32 (finite) with N >= 1 samples and y int64 (>= 0)
// or float32 (finite) of N. LibTorch is not instrumented: coverage guides through our code only, and a crash
// inside LibTorch's reader on garbage is LibTorch's (each one found is listed here, with our guard where there
// can be one). Found in LibTorch 1.13:
//   - its unpickler reserves a length read from data.pkl before checking the bytes are there (1 GiB for a damaged
//     1 KiB file; regressions/tensor_file/libtorch-unpickler-allocates-1-gib): guarded, every record's CRC-32 is
//     checked before LibTorch reads the file (core/trainer/zip_records.h);
//   - a zip without the "version" record leaks the reader's miniz state (about 430 bytes) when LibTorch's reader
//     throws from its constructor (regressions/tensor_file/libtorch-leak-no-version-record): no guard possible
//     from outside, suppressed in lsan.supp (the trainer exits on that error, nothing accumulates).
#include <cstdint>
#include <string>

#include "trainer/data/tensor_file.h"
#include "trainer/errors.h"
#include "fuzz_support.h"

using namespace ringmaster::trainer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = ringmaster::fuzz::writeScratchFile("data.pt", ringmaster::fuzz::asText(data, size));
    try {
        const LoadedData loaded = readTensorFile(path, "--data");
        FUZZ_CHECK(loaded.inputs.dim() >= 1 && loaded.inputs.size(0) >= 1);
        FUZZ_CHECK(loaded.inputs.scalar_type() == torch::kUInt8 || loaded.inputs.scalar_type() == torch::kFloat32);
        FUZZ_CHECK(loaded.targets.size(0) == loaded.inputs.size(0));
        FUZZ_CHECK(loaded.targets.scalar_type() == torch::kInt64 || loaded.targets.scalar_type() == torch::kFloat32);
    } catch (const UsageError& error) {
        FUZZ_CHECK(std::string(error.what()).find(path) != std::string::npos);
    }
    return 0;
}
