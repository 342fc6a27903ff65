#include "trainer/tensorboard_writer.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

#include "protocol/tensorboard_records.h"
#include "trainer/log.h"

namespace tb = ringmaster::protocol::tensorboard;

namespace ringmaster::trainer {
namespace {

constexpr mode_t kFileMode = 0644;

double unixSecondsNow()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

std::unique_ptr<TensorBoardWriter> TensorBoardWriter::forRunDir(const std::string& runDir)
{
    const std::filesystem::path folder = std::filesystem::path(runDir) / protocol::kTensorBoardFolder;
    std::error_code error;
    std::filesystem::create_directories(folder, error); // a failure shows as the open's error below
    return std::make_unique<TensorBoardWriter>(tb::nextEventFilePath(folder.string()));
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
