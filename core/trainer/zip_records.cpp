#include "trainer/zip_records.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <new>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <archive.h>
#include <archive_entry.h>

#include "trainer/zip_directory.h"

namespace ringmaster::trainer {
namespace {

constexpr std::size_t kReadBlock = 1 << 20;

using Reader = std::unique_ptr<archive, decltype(&archive_read_free)>;

Reader newZipReader()
{
    Reader reader(archive_read_new(), &archive_read_free);
    if (!reader) throw std::bad_alloc();
    archive_read_support_format_zip(reader.get());
    return reader;
}

std::string libraryError(archive* reader)
{
    const char* text = archive_error_string(reader);
    return text ? text : "unreadable";
}

// libarchive checks each record's CRC-32 as its data is read and reports a mismatch as an error.
std::string readEveryRecord(archive* reader)
{
    archive_entry* entry = nullptr;
    std::vector<char> buffer(kReadBlock);
    int entries = 0;
    for (;;) {
        const int status = archive_read_next_header(reader, &entry);
        if (status == ARCHIVE_EOF) break;
        if (status != ARCHIVE_OK) return libraryError(reader);
        ++entries;
        const char* name = archive_entry_pathname(entry);
        for (;;) {
            const auto got = archive_read_data(reader, buffer.data(), buffer.size());
            if (got == 0) break;
            if (got < 0) return std::string(name ? name : "?") + ": " + libraryError(reader);
        }
    }
    return entries == 0 ? "no records" : "";
}

} // namespace

std::string zipRecordDamage(const std::string& path)
{
    {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat info {};
        if (fd < 0 || ::fstat(fd, &info) != 0) {
            if (fd >= 0) ::close(fd);
            return std::strerror(errno);
        }
        const std::string problem = zipDirectoryProblem(static_cast<std::uint64_t>(info.st_size), [fd](std::uint64_t offset, std::size_t size, void* out) {
            std::size_t done = 0;
            while (done < size) {
                const ssize_t got = ::pread(fd, static_cast<char*>(out) + done, size - done, static_cast<off_t>(offset + done));
                if (got <= 0) return false;
                done += static_cast<std::size_t>(got);
            }
            return true;
        });
        ::close(fd);
        if (!problem.empty()) return problem;
    }
    const Reader reader = newZipReader();
    if (archive_read_open_filename(reader.get(), path.c_str(), kReadBlock) != ARCHIVE_OK) return libraryError(reader.get());
    return readEveryRecord(reader.get());
}

std::string zipRecordDamage(const void* data, std::size_t size)
{
    const std::string problem = zipDirectoryProblem(size, [data, size](std::uint64_t offset, std::size_t length, void* out) {
        if (offset > size || length > size - offset) return false;
        std::memcpy(out, static_cast<const char*>(data) + offset, length);
        return true;
    });
    if (!problem.empty()) return problem;
    const Reader reader = newZipReader();
    if (archive_read_open_memory(reader.get(), data, size) != ARCHIVE_OK) return libraryError(reader.get());
    return readEveryRecord(reader.get());
}

} // namespace ringmaster::trainer
