#include "protocol/safe_files.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ringmaster::protocol {
namespace {

std::string folderOf(const std::string& path)
{
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::string describe(const char* action, const std::string& path, int error)
{
    return std::string(action) + " " + path + ": " + std::strerror(error);
}

// Depth-first over DIR's entries (lstat, never following); stops at the first link.
std::string scan(const std::string& dir, int depth, int* budget)
{
    DIR* stream = ::opendir(dir.c_str());
    if (!stream) return {};
    std::string found;
    while (const dirent* entry = ::readdir(stream)) {
        const std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        if (--*budget < 0) break;
        const std::string path = dir + "/" + name;
        struct stat info {};
        if (::lstat(path.c_str(), &info) != 0) continue;
        if (S_ISLNK(info.st_mode)) {
            found = path;
            break;
        }
        if (S_ISDIR(info.st_mode) && depth > 1) {
            found = scan(path, depth - 1, budget);
            if (!found.empty()) break;
        }
    }
    ::closedir(stream);
    return found;
}

bool writeAll(int fd, const std::string& bytes)
{
    std::size_t done = 0;
    while (done < bytes.size()) {
        const ssize_t wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) {
            if (wrote == 0) errno = ENOSPC;
            return false;
        }
        done += static_cast<std::size_t>(wrote);
    }
    return true;
}

} // namespace

std::string findSymlink(const std::string& dir, bool* complete)
{
    struct stat info {};
    if (complete) *complete = true;
    if (::lstat(dir.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) return dir;
    int budget = kSymlinkScanEntries;
    std::string found = scan(dir, kSymlinkScanDepth, &budget);
    if (complete) *complete = !found.empty() || budget >= 0;
    return found;
}

std::string symlinkProblem(const std::string& dir)
{
    bool complete = true;
    const std::string link = findSymlink(dir, &complete);
    if (!complete) {
        return dir + " holds more than " + std::to_string(kSymlinkScanEntries) + " entries, too many to check for symbolic "
               "links (a run directory from someone else could redirect the run's writes): use a run directory of your own";
    }
    if (link.empty()) return {};
    char target[4096] = {};
    const ssize_t length = ::readlink(link.c_str(), target, sizeof target - 1);
    return link + " is a symbolic link" + (length > 0 ? " to " + std::string(target, static_cast<std::size_t>(length)) : std::string()) +
           ": a run directory must hold only its own files and folders (one from someone else could redirect the run's "
           "writes); remove the link, or copy the run without links (cp -rL) and use the copy";
}

int openInRunDirectory(const std::string& path, int flags, int mode)
{
    int fd;
    do {
        fd = ::open(path.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
    } while (fd < 0 && errno == EINTR);
    return fd;
}

bool syncFolderOf(const std::string& path)
{
    const int fd = ::open(folderOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool synced = ::fsync(fd) == 0;
    const int error = errno;
    ::close(fd);
    errno = error;
    return synced;
}

bool writeFileAtomically(const std::string& path, const std::string& bytes, std::string* error)
{
    // PID and a counter: two threads of one process never share a temp file.
    static std::atomic<unsigned> counter{0};
    const std::string temp = path + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter.fetch_add(1));
    ::unlink(temp.c_str()); // a leftover of an earlier process with this pid: ours to replace (never followed)
    const int fd = openInRunDirectory(temp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        *error = describe("create", temp, errno);
        return false;
    }
    const char* failed = nullptr;
    if (!writeAll(fd, bytes)) failed = "write";
    else if (::fsync(fd) != 0) failed = "sync";
    int reason = errno;
    if (::close(fd) != 0 && !failed) {
        failed = "close";
        reason = errno;
    }
    if (!failed && ::rename(temp.c_str(), path.c_str()) != 0) {
        failed = "rename onto";
        reason = errno;
    }
    if (failed) {
        ::unlink(temp.c_str());
        *error = describe(failed, path, reason);
        return false;
    }
    if (!syncFolderOf(path)) {
        *error = describe("sync the folder of", path, errno);
        return false;
    }
    return true;
}

} // namespace ringmaster::protocol
