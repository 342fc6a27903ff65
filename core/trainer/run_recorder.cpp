#include "trainer/run_recorder.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "protocol/run_layout.h"
#include "trainer/atomic_file.h"
#include "trainer/errors.h"

namespace fs = std::filesystem;

namespace ringmaster::trainer {
namespace {

constexpr int kMaxRowBytes = 256;
constexpr std::size_t kNumberChars = 32; // the longest shortest-form double is 24 characters ("-2.2250738585072014e-308")

// The shortest text that reads back as exactly VALUE (std::to_chars): "0.01", "0.69314718246459961", "nan".
// The CSVs hold the values the trainer computed, bit for bit, so an export round-trips them and the
// TensorBoard file's float32 of a value is the float32 of its CSV text.
struct ExactNumber
{
    explicit ExactNumber(double value)
    {
        const auto result = std::to_chars(text.data(), text.data() + text.size() - 1, value);
        *result.ptr = '\0';
    }
    const char* c_str() const { return text.data(); }
    std::array<char, kNumberChars> text{};
};

// Keeps the header and the complete rows whose step column is <= lastStep.
void truncateCsv(const std::string& path, const std::string& header, int stepColumn, std::int64_t lastStep,
                 const std::string& abandonedDir)
{
    const std::string original = readFileWhole(path);
    if (!abandonedDir.empty()) {
        writeFileAtomically((fs::path(abandonedDir) / fs::path(path).filename()).string(), original);
    }
    const auto columns = std::count(header.begin(), header.end(), ',');
    std::istringstream in(original);
    std::ostringstream kept;
    kept << header << '\n';
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
        if (first) {
            first = false;
            continue;
        }
        if (std::count(line.begin(), line.end(), ',') != columns) continue; // a torn last line (crash, full disk)
        std::istringstream fields(line);
        std::string field;
        for (int column = 0; column <= stepColumn && std::getline(fields, field, ','); ++column) {}
        try {
            if (std::stoll(field) <= lastStep) kept << line << '\n';
        } catch (const std::exception&) {
            // Not a row: drop it.
        }
    }
    writeFileAtomically(path, kept.str());
}

int openCsv(const std::string& path, const std::string& header, int stepColumn, std::int64_t resumeStep,
            const std::string& abandonedDir)
{
    if (resumeStep >= 0 && fs::exists(path)) {
        truncateCsv(path, header, stepColumn, resumeStep, abandonedDir);
    } else {
        // A fresh run over an earlier one: the earlier metrics go with its abandoned checkpoints.
        if (!abandonedDir.empty() && fs::exists(path)) {
            writeFileAtomically((fs::path(abandonedDir) / fs::path(path).filename()).string(), readFileWhole(path));
        }
        writeFileAtomically(path, header + "\n");
    }
    const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw IoError(path, "open", errno);
    return fd;
}

} // namespace

RunRecorder::RunRecorder(const std::string& runDir, std::int64_t resumeStep, const std::string& abandonedDir)
    : m_runDir(runDir)
{
    std::error_code error;
    fs::create_directories(runDir, error);
    if (error) throw IoError(runDir, "create folder", error.value());
    m_metrics.path = (fs::path(runDir) / protocol::kMetricsFile).string();
    m_metrics.fd = openCsv(m_metrics.path, protocol::csvHeader(protocol::kMetricsColumns), 0, resumeStep, abandonedDir);
    m_eval.path = (fs::path(runDir) / protocol::kEvalFile).string();
    m_eval.fd = openCsv(m_eval.path, protocol::csvHeader(protocol::kEvalColumns), 1, resumeStep, abandonedDir);
}

RunRecorder::~RunRecorder()
{
    if (m_metrics.fd >= 0) ::close(m_metrics.fd);
    if (m_eval.fd >= 0) ::close(m_eval.fd);
}

// One write(2) per row, unbuffered: the durable record, so a crash loses at most the row in flight,
// and a failed write (ENOSPC) is seen at once with its errno.
void RunRecorder::append(const CsvFile& file, const char* line, int length)
{
    std::size_t done = 0;
    const auto size = static_cast<std::size_t>(std::clamp(length, 0, kMaxRowBytes - 1));
    const off_t before = ::lseek(file.fd, 0, SEEK_END);
    while (done < size) {
        const ssize_t written = ::write(file.fd, line + done, size - done);
        if (written < 0) {
            if (errno == EINTR) continue;
            const int error = errno;
            if (before >= 0 && ::ftruncate(file.fd, before) != 0) {} // best effort: no torn row left behind
            throw IoError(file.path, "append to", error);
        }
        done += static_cast<std::size_t>(written);
    }
}

void RunRecorder::appendStep(std::int64_t step, std::int64_t epoch, double loss, double lr, double samplesPerSec,
                             double wallTime)
{
    char line[kMaxRowBytes];
    const int length = std::snprintf(line, sizeof line, "%lld,%lld,%s,%s,%s,%.6f\n", static_cast<long long>(step),
                                     static_cast<long long>(epoch), ExactNumber(loss).c_str(), ExactNumber(lr).c_str(),
                                     ExactNumber(samplesPerSec).c_str(), wallTime);
    append(m_metrics, line, length);
}

void RunRecorder::appendEval(std::int64_t epoch, std::int64_t step, double valLoss, double valAccuracy)
{
    char line[kMaxRowBytes];
    const int length = std::snprintf(line, sizeof line, "%lld,%lld,%s,%s\n", static_cast<long long>(epoch),
                                     static_cast<long long>(step), ExactNumber(valLoss).c_str(), ExactNumber(valAccuracy).c_str());
    append(m_eval, line, length);
}

void RunRecorder::writeSummary(const nlohmann::json& summary)
{
    writeFileAtomically((fs::path(m_runDir) / protocol::kSummaryFile).string(), summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

} // namespace ringmaster::trainer
