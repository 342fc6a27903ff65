#include "trainer/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

#include "trainer/errors.h"
#include "trainer/log.h"

namespace ringmaster::trainer {

AtomicFile::AtomicFile(std::string path)
    : m_path(std::move(path))
    , m_tempPath(tempPathFor(m_path))
{
    ::unlink(m_tempPath.c_str()); // a leftover of an earlier process with this pid; never followed
    m_fd = ::open(m_tempPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (m_fd < 0) throw IoError(m_path, "create", errno);
}

AtomicFile::~AtomicFile()
{
    if (m_fd >= 0) ::close(m_fd);
    if (!m_committed) ::unlink(m_tempPath.c_str());
}

std::string AtomicFile::tempPathFor(const std::string& path)
{
    return path + ".tmp-" + std::to_string(::getpid());
}

int AtomicFile::tryWrite(const void* data, std::size_t size)
{
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
        const ssize_t written = ::write(m_fd, bytes, size);
        if (written < 0) {
            if (errno == EINTR) continue;
            return errno;
        }
        bytes += written;
        size -= static_cast<std::size_t>(written);
    }
    return 0;
}

void AtomicFile::fail(const char* action, int errnoValue)
{
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
    ::unlink(m_tempPath.c_str()); // free the space now, not only when this object goes
    throw IoError(m_path, action, errnoValue);
}

void AtomicFile::write(const void* data, std::size_t size)
{
    if (m_recordedError != 0) fail("write", m_recordedError);
    if (const int error = tryWrite(data, size)) fail("write", error);
}

void AtomicFile::writeOrRecord(const void* data, std::size_t size)
{
    if (m_recordedError == 0) m_recordedError = tryWrite(data, size);
}

void AtomicFile::commit()
{
    if (m_recordedError != 0) fail("write", m_recordedError);
    if (::fsync(m_fd) != 0) fail("write", errno);
    const int fd = m_fd;
    m_fd = -1;
    if (::close(fd) != 0) fail("write", errno);
    if (::rename(m_tempPath.c_str(), m_path.c_str()) != 0) fail("rename temp file to", errno);
    m_committed = true;
    // The rename is durable only once the folder is synced; a folder that cannot be synced (some
    // network file systems answer EINVAL) keeps the file, which is already complete.
    const auto folder = std::filesystem::path(m_path).parent_path();
    const int dirFd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd >= 0) {
        const int result = ::fsync(dirFd);
        const int error = errno;
        ::close(dirFd);
        // The file is complete and in place: a failed folder sync is worth a warning, not a failed run.
        if (result != 0 && error != EINVAL) log::warn("{}", IoError(folder.string(), "sync folder", error).what());
    }
}

void writeFileAtomically(const std::string& path, const std::string& bytes)
{
    AtomicFile file(path);
    file.write(bytes.data(), bytes.size());
    file.commit();
}

std::string readFileWhole(const std::string& path)
{
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    if (!in || in.bad()) throw IoError(path, "read", errno ? errno : EIO);
    return text.str();
}

} // namespace ringmaster::trainer
