// Fuzz target: CSV tables for --data FILE.csv (core/trainer/data/csv_table.h: RFC 4180 subset, numeric
// features, one label column). Writes arbitrary bytes to a .csv in a scratch folder and reads it as a training
// split (the last column the label), then as a validation split against two known classes.
// Must hold: a bad table gives a UsageError naming the file and nothing else escapes; a table that loads is
// float32 [N, F] with F >= 1, finite, with N targets (int64 class indices >= 0 below the class count when
// classes are named, else int64 >= 0 or float32 finite); memory stays bounded by the file's size (the feature
// tensor is not allocated from a header and a row count before the rows are checked); no crash, no leak.
#include <cstdint>
#include <string>

#include "trainer/data/csv_table.h"
#include "trainer/errors.h"
#include "fuzz_support.h"

using namespace ringmaster::trainer;

namespace {

void check(const LoadedData& data)
{
    FUZZ_CHECK(data.inputs.dim() == 2 && data.inputs.size(0) >= 1 && data.inputs.size(1) >= 1);
    FUZZ_CHECK(data.inputs.scalar_type() == torch::kFloat32);
    FUZZ_CHECK(torch::isfinite(data.inputs).all().item<bool>());
    FUZZ_CHECK(data.targets.dim() == 1 && data.targets.size(0) == data.inputs.size(0));
    if (data.targets.scalar_type() == torch::kInt64) {
        FUZZ_CHECK(data.targets.min().item<std::int64_t>() >= 0);
        if (!data.classNames.empty()) {
            FUZZ_CHECK(data.targets.max().item<std::int64_t>() < static_cast<std::int64_t>(data.classNames.size()));
        }
    } else {
        FUZZ_CHECK(data.targets.scalar_type() == torch::kFloat32 && data.classNames.empty());
        FUZZ_CHECK(torch::isfinite(data.targets).all().item<bool>());
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string path = ringmaster::fuzz::writeScratchFile("table.csv", ringmaster::fuzz::asText(data, size));
    try {
        check(readCsvTable(path, "", "--data"));
    } catch (const UsageError& error) {
        FUZZ_CHECK(std::string(error.what()).find(path) != std::string::npos);
    }
    try {
        check(readCsvTable(path, "", "--val-data", {"cat", "dog"}));
    } catch (const UsageError& error) {
        FUZZ_CHECK(std::string(error.what()).find(path) != std::string::npos);
    }
    return 0;
}
