// Fuzz target: the checkpoint check before --resume trusts a file (core/trainer/checkpoint.h, verifyCheckpoint:
// the zip magic, then every record of the archive read through libarchive with its CRC-32 compared, then the
// header read by LibTorch's archive reader). Writes arbitrary bytes as RUN_DIR/checkpoints/step-00000001.pt in a
// scratch folder and checks it as the file itself and as the run directory's newest checkpoint
// (resolveCheckpoint).
// Must hold: a damaged or foreign file gives a UsageError naming it and nothing else escapes; libarchive's
// reading is bounded (a 1 MiB block, records streamed, never held whole); no crash, no leak. Past the CRCs
// LibTorch's reader is not instrumented (a crash inside it on a file with sound CRCs is LibTorch's, listed here
// with our guard where there can be one).
#include <cstdint>
#include <string>
#include <vector>

#include "trainer/checkpoint.h"
#include "trainer/errors.h"
#include "fuzz_support.h"

using namespace ringmaster::trainer;
namespace fuzz = ringmaster::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string runDir = fuzz::freshScratchFolder("run");
    const std::string path = fuzz::writeScratchFile("run/checkpoints/step-00000001.pt", fuzz::asText(data, size));
    bool intact = true;
    try {
        verifyCheckpoint(path);
    } catch (const UsageError& error) {
        intact = false;
        FUZZ_CHECK(std::string(error.what()).find(path) != std::string::npos);
    }
    std::vector<std::string> skipped;
    try {
        FUZZ_CHECK(resolveCheckpoint(runDir, &skipped) == path);
        FUZZ_CHECK(intact && skipped.empty());
    } catch (const UsageError& error) {
        FUZZ_CHECK(!intact && skipped.size() == 1);
    }
    return 0;
}
