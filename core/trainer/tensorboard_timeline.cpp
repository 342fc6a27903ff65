#include "trainer/tensorboard_timeline.h"

#include <algorithm>
#include <exception>
#include <filesystem>
#include <system_error>
#include <vector>

#include "protocol/tensorboard_records.h"
#include "trainer/atomic_file.h"
#include "trainer/log.h"
#include "trainer/tensorboard_writer.h"

namespace fs = std::filesystem;
namespace tb = ringmaster::protocol::tensorboard;

namespace ringmaster::trainer {
namespace {

std::vector<fs::path> eventFilesIn(const fs::path& folder)
{
    std::vector<fs::path> files;
    std::error_code error;
    for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(tb::kEventFilePrefix, 0) == 0 && it->is_regular_file(error)) files.push_back(it->path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

void settleFile(const fs::path& file, std::int64_t resumeStep, const std::string& abandonedDir)
{
    const std::string original = readFileWhole(file.string());
    if (!abandonedDir.empty()) {
        const fs::path aside = fs::path(abandonedDir) / protocol::kTensorBoardFolder;
        std::error_code error;
        fs::create_directories(aside, error); // a failure shows as the write's error
        writeFileAtomically((aside / file.filename()).string(), original);
    }
    if (resumeStep < 0) {
        std::error_code error;
        if (!fs::remove(file, error) && error) throw std::system_error(error, "remove");
        return;
    }
    const std::string kept = eventRecordsUpTo(original, resumeStep);
    if (kept.size() != original.size()) writeFileAtomically(file.string(), kept);
}

} // namespace

std::string eventRecordsUpTo(std::string_view bytes, std::int64_t lastStep)
{
    std::string kept;
    std::size_t offset = 0;
    while (offset < bytes.size()) {
        const tb::RecordRead record = tb::readRecord(bytes.substr(offset));
        if (record.status == tb::RecordStatus::Incomplete || record.status == tb::RecordStatus::BadLengthCrc) break;
        if (record.status == tb::RecordStatus::Complete) {
            const auto event = tb::decodeEvent(record.data);
            if (event && event->step <= lastStep) kept.append(bytes.substr(offset, record.recordBytes));
        }
        if (record.recordBytes > bytes.size() - offset) break; // an oversized record cut short
        offset += record.recordBytes;
    }
    return kept;
}

void settleTensorBoardTimeline(const std::string& runDir, std::int64_t resumeStep, const std::string& abandonedDir)
{
    for (const fs::path& file : eventFilesIn(fs::path(runDir) / protocol::kTensorBoardFolder)) {
        try {
            settleFile(file, resumeStep, abandonedDir);
        } catch (const std::exception& error) {
            log::warn("TensorBoard event file {}: cannot set the abandoned steps aside ({}); TensorBoard may draw them "
                      "beside this run's",
                      file.string(), error.what());
        }
    }
}

} // namespace ringmaster::trainer
