#include "zip_records.h"

#include <memory>
#include <new>
#include <vector>

#include <archive.h>
#include <archive_entry.h>

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
    const Reader reader = newZipReader();
    if (archive_read_open_filename(reader.get(), path.c_str(), kReadBlock) != ARCHIVE_OK) return libraryError(reader.get());
    return readEveryRecord(reader.get());
}

std::string zipRecordDamage(const void* data, std::size_t size)
{
    const Reader reader = newZipReader();
    if (archive_read_open_memory(reader.get(), data, size) != ARCHIVE_OK) return libraryError(reader.get());
    return readEveryRecord(reader.get());
}

} // namespace ringmaster::trainer
