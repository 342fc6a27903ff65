// Fuzz target: the job file as the trainer reads it (`ringmaster-trainer --job FILE`, core/trainer/config.h:
// nlohmann_json, the flags by name, top level or under "trainer"). Writes arbitrary bytes to a job file in a
// scratch folder, applies it to the default configuration and checks the result as the trainer does.
// Must hold: a bad file, or a value out of range, gives a UsageError (one line naming the file or the flag)
// and nothing else escapes; no crash, no undefined behaviour, no leak.
#include <cstdint>
#include <string>

#include "trainer/config.h"
#include "trainer/errors.h"
#include "fuzz_support.h"

using namespace ringmaster::trainer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = ringmaster::fuzz::writeScratchFile("job.json", ringmaster::fuzz::asText(data, size));
    TrainerConfig config;
    try {
        applyJobFile(path, config);
        validateConfig(config);
    } catch (const UsageError& error) {
        const std::string message = error.what();
        FUZZ_CHECK(!message.empty());
    }
    return 0;
}
