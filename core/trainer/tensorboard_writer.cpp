#include "tensorboard_writer.h"

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "../protocol/tensorboard_records.h"
#include "log.h"

namespace tb = ringmaster::protocol::tensorboard;

namespace ringmaster::trainer {
namespace {

constexpr int kHostNameBytes = 256;
constexpr mode_t kFileMode = 0644;

double unixSecondsNow()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string hostName()
{
    char name[kHostNameBytes] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
    return name;
}

// TensorBoard reads a folder's event files in name order, so this run's must sort after every earlier one (a
// resume's cut file from the same second, a pid with more digits): its seconds are past the newest file's.
long long secondsAfterEveryFileIn(const std::filesystem::path& folder)
{
    long long seconds = static_cast<long long>(std::time(nullptr));
    std::error_code error;
    const std::string prefix = tb::kEventFilePrefix;
    for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        long long existing = 0;
        const auto [rest, parsed] = std::from_chars(name.data() + prefix.size(), name.data() + name.size(), existing);
        if (parsed == std::errc() && existing >= seconds) seconds = existing + 1;
    }
    return seconds;
}

} // namespace

std::unique_ptr<TensorBoardWriter> TensorBoardWriter::forRunDir(const std::string& runDir)
{
    const std::filesystem::path folder = std::filesystem::path(runDir) / kTensorBoardDir;
    std::error_code error;
    std::filesystem::create_directories(folder, error); // a failure shows as the open's error below
    const std::string name = std::string(tb::kEventFilePrefix) + std::to_string(secondsAfterEveryFileIn(folder)) + "." +
                             hostName() + "." + std::to_string(static_cast<long>(::getpid()));
    return std::make_unique<TensorBoardWriter>((folder / name).string());
}

TensorBoardWriter::TensorBoardWriter(std::string path) : m_path(std::move(path))
{
    m_fd = ::open(m_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC | O_NOFOLLOW, kFileMode);
    if (m_fd < 0) {
        disable("create", errno);
        return;
    }
    append(tb::frameRecord(tb::encodeFileVersionEvent(unixSecondsNow())));
}

TensorBoardWriter::~TensorBoardWriter()
{
    if (m_fd >= 0) ::close(m_fd);
}

void TensorBoardWriter::writeScalars(std::int64_t step, const std::vector<Scalar>& scalars)
{
    writeScalars(step, scalars, unixSecondsNow());
}

void TensorBoardWriter::writeScalars(std::int64_t step, const std::vector<Scalar>& scalars, double wallTime)
{
    if (m_fd < 0 || scalars.empty()) return;
    std::string records;
    for (const Scalar& scalar : scalars) {
        records += tb::frameRecord(tb::encodeScalarEvent(wallTime, step, scalar.tag, static_cast<float>(scalar.value)));
    }
    append(records);
}

void TensorBoardWriter::append(const std::string& bytes)
{
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t n = ::write(m_fd, bytes.data() + written, bytes.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            disable("write", errno);
            return;
        }
        written += static_cast<std::size_t>(n);
    }
}

void TensorBoardWriter::disable(const char* action, int errnoValue)
{
    log::warn("TensorBoard event file {}: cannot {} ({}); training goes on without it (metrics.csv has every step)",
                 m_path, action, std::strerror(errnoValue));
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
}

} // namespace ringmaster::trainer
