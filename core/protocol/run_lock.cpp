#include "protocol/run_lock.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace ringmaster::protocol {
namespace {

std::string lockPath(const std::string& dir)
{
    return dir + "/" + kRunLockFile;
}

struct flock wholeFile(short type)
{
    struct flock lock {};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;   // to the end, however long
    lock.l_pid = 0;   // required for OFD locks
    return lock;
}

std::string recordedHolder(int fd)
{
    char text[256] = {};
    const ssize_t got = ::pread(fd, text, sizeof text - 1, 0);
    std::string holder(text, got > 0 ? static_cast<std::size_t>(got) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    return holder.empty() ? std::string("another process") : holder;
}

} // namespace

RunLock::Result RunLock::acquire(const std::string& dir, std::string* detail)
{
    release();
    const std::string path = lockPath(dir);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd < 0) {
        *detail = "cannot open " + path + ": " + std::strerror(errno);
        return Result::Failed;
    }
    struct flock lock = wholeFile(F_WRLCK);
    if (::fcntl(fd, F_OFD_SETLK, &lock) != 0) {
        const int error = errno;
        if (error == EAGAIN || error == EACCES) {
            *detail = recordedHolder(fd);
            ::close(fd);
            return Result::HeldElsewhere;
        }
        *detail = "cannot lock " + path + ": " + std::strerror(error);
        ::close(fd);
        return Result::Failed;
    }
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
    const std::string text = "pid " + std::to_string(::getpid()) + " on " + (host[0] ? host : "this host") + "\n";
    if (::ftruncate(fd, 0) == 0) {
        [[maybe_unused]] const ssize_t written = ::pwrite(fd, text.data(), text.size(), 0);   // best effort: messages only
    }
    m_fd = fd;
    return Result::Taken;
}

void RunLock::release()
{
    if (m_fd >= 0) ::close(m_fd);   // closing the last descriptor of the description drops the lock
    m_fd = -1;
}

RunLockState probeRunLock(const std::string& dir, std::string* holder)
{
    const int fd = ::open(lockPath(dir).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return RunLockState::NoLockFile;
    struct flock lock = wholeFile(F_WRLCK);
    const bool asked = ::fcntl(fd, F_OFD_GETLK, &lock) == 0;
    const bool held = asked && lock.l_type != F_UNLCK;
    if (held && holder) *holder = recordedHolder(fd);
    ::close(fd);
    if (!asked) return RunLockState::NoLockFile;   // cannot tell (e.g. a file system without locks)
    return held ? RunLockState::Held : RunLockState::Free;
}

} // namespace ringmaster::protocol
