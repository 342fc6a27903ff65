#include "trainer/zip_directory.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <zlib.h>

namespace ringmaster::trainer {
namespace {

constexpr std::uint32_t kEndOfDirectory = 0x06054b50;
constexpr std::uint32_t kZip64Locator = 0x07064b50;
constexpr std::uint32_t kZip64End = 0x06064b50;
constexpr std::uint32_t kDirectoryEntry = 0x02014b50;
constexpr std::uint32_t kLocalHeader = 0x04034b50;
constexpr std::size_t kEndBytes = 22;
constexpr std::size_t kMaxComment = 0xffff;
constexpr std::size_t kEntryBytes = 46;
constexpr std::size_t kLocalBytes = 30;
constexpr std::uint16_t kZip64Extra = 0x0001;
constexpr std::uint32_t kSaturated = 0xffffffff;
constexpr std::uint16_t kDeflated = 8;
constexpr std::uint64_t kDeflateMaxRatio = 1032; // deflate's best case: 1032 bytes out of one byte in
constexpr std::uint64_t kMaxInflatedRecordBytes = 64ull << 20;
// Pickles larger than this are not walked (a checkpoint's data.pkl is kilobytes; its tensors are other records).
constexpr std::uint64_t kMaxPickleWalkBytes = 256ull << 20;

std::uint64_t little(const unsigned char* bytes, int count)
{
    std::uint64_t value = 0;
    for (int i = count - 1; i >= 0; --i) value = (value << 8) | bytes[i];
    return value;
}

struct Entry
{
    std::string name;
    std::uint16_t method = 0;
    std::uint64_t compressed = 0;
    std::uint64_t uncompressed = 0;
    std::uint64_t localOffset = 0;
};

// ZIP64's extra field replaces, in this order, each of the three values that is saturated.
bool readZip64Extra(const unsigned char* extra, std::size_t length, Entry* entry, bool bigUncompressed, bool bigCompressed, bool bigOffset)
{
    for (std::size_t at = 0; at + 4 <= length;) {
        const auto id = static_cast<std::uint16_t>(little(extra + at, 2));
        const auto size = static_cast<std::size_t>(little(extra + at + 2, 2));
        if (at + 4 + size > length) return false;
        if (id == kZip64Extra) {
            std::size_t field = at + 4;
            const std::size_t end = field + size;
            for (auto [big, target] : {std::pair{bigUncompressed, &entry->uncompressed}, std::pair{bigCompressed, &entry->compressed},
                                       std::pair{bigOffset, &entry->localOffset}}) {
                if (!big) continue;
                if (field + 8 > end) return false;
                *target = little(extra + field, 8);
                field += 8;
            }
            return true;
        }
        at += 4 + size;
    }
    return !bigUncompressed && !bigCompressed && !bigOffset;
}

// Raw deflate data inflated into exactly SIZE bytes (bounded above by the caller), in place.
bool inflateExactly(std::vector<unsigned char>* bytes, std::uint64_t size)
{
    std::vector<unsigned char> out(static_cast<std::size_t>(size) + 1);
    z_stream stream{};
    if (::inflateInit2(&stream, -MAX_WBITS) != Z_OK) return false;
    stream.next_in = bytes->data();
    stream.avail_in = static_cast<uInt>(bytes->size());
    stream.next_out = out.data();
    stream.avail_out = static_cast<uInt>(out.size());
    const int status = ::inflate(&stream, Z_FINISH);
    const std::uint64_t produced = stream.total_out;
    ::inflateEnd(&stream);
    if (status != Z_STREAM_END || produced != size) return false;
    out.resize(static_cast<std::size_t>(size));
    *bytes = std::move(out);
    return true;
}

// [start, end) of a record's bytes, local header to the end of its data, for the overlap check.
struct Extent
{
    std::uint64_t start;
    std::uint64_t end;
    std::string name;
};

std::string checkRecord(const Entry& entry, std::uint64_t fileSize, const ReadAt& readAt, Extent* extent)
{
    const std::string name = entry.name.empty() ? std::string("?") : entry.name;
    // data.pkl, constants.pkl, and TorchScript's code/*.debug_pkl: LibTorch unpickles each.
    const bool pickle = entry.name.size() >= 3 && entry.name.compare(entry.name.size() - 3, 3, "pkl") == 0;
    if (entry.method == kDeflated) {
        // TorchScript deflates its code/*.py records: what one inflates to is bounded by deflate's best ratio.
        if (entry.compressed > fileSize || entry.uncompressed > kMaxInflatedRecordBytes ||
            entry.uncompressed > entry.compressed * kDeflateMaxRatio + 1024) {
            return name + ": compressed record claiming " + std::to_string(entry.uncompressed) + " bytes from " +
                   std::to_string(entry.compressed);
        }
    } else if (entry.method != 0) {
        return name + ": compressed with method " + std::to_string(entry.method) + ", which PyTorch never uses; save it "
               "again with torch.save or torch.jit.save";
    } else if (entry.uncompressed != entry.compressed) {
        return name + ": stored record whose two sizes disagree";
    }
    if (entry.method == 0 && entry.uncompressed > fileSize) {
        return name + ": stored size " + std::to_string(entry.uncompressed) + " bytes, more than the file's " + std::to_string(fileSize);
    }
    unsigned char local[kLocalBytes];
    if (entry.localOffset > fileSize - std::min<std::uint64_t>(fileSize, kLocalBytes) ||
        !readAt(entry.localOffset, kLocalBytes, local) || little(local, 4) != kLocalHeader) {
        return name + ": its local header lies outside the file";
    }
    const std::uint64_t dataStart = entry.localOffset + kLocalBytes + little(local + 26, 2) + little(local + 28, 2);
    if (dataStart > fileSize || entry.compressed > fileSize - dataStart) return name + ": its data runs past the end of the file";
    *extent = {entry.localOffset, dataStart + entry.compressed, name};
    if (pickle && entry.uncompressed > kMaxPickleWalkBytes) {
        return name + ": a pickle of " + std::to_string(entry.uncompressed) + " bytes, more than Ringmaster reads (" +
               std::to_string(kMaxPickleWalkBytes >> 20) + " MiB)";
    }
    if (pickle) {
        std::vector<unsigned char> bytes(static_cast<std::size_t>(entry.compressed));
        if (!bytes.empty() && !readAt(dataStart, bytes.size(), bytes.data())) return name + ": cannot be read";
        if (entry.method == kDeflated && !inflateExactly(&bytes, entry.uncompressed)) {
            return name + ": does not inflate to the " + std::to_string(entry.uncompressed) + " bytes its directory states";
        }
        if (const std::string problem = pickleLengthProblem(bytes.data(), bytes.size()); !problem.empty()) return name + ": " + problem;
    }
    return {};
}

// Where the central directory is, and how many entries it says it has.
struct Directory
{
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::uint64_t entries = 0;
};

std::string findDirectory(std::uint64_t fileSize, const ReadAt& readAt, Directory* directory)
{
    if (fileSize < kEndBytes) return "too short for a zip archive";
    const std::size_t tail = static_cast<std::size_t>(std::min<std::uint64_t>(fileSize, kEndBytes + kMaxComment));
    std::vector<unsigned char> bytes(tail);
    if (!readAt(fileSize - tail, tail, bytes.data())) return "unreadable";
    // The end record LibTorch's reader (miniz) takes: the last signature with a whole record after it. Its
    // comment must reach the end of the file exactly, or the archive is not what it seems.
    std::size_t at = tail - kEndBytes + 1;
    while (at-- > 0) {
        if (little(&bytes[at], 4) == kEndOfDirectory) break;
        if (at == 0) return "no end of central directory";
    }
    if (at + kEndBytes + little(&bytes[at + 20], 2) != tail) return "bytes after the end of central directory";
    const std::uint64_t endOffset = fileSize - tail + at;
    directory->entries = little(&bytes[at + 10], 2);
    directory->size = little(&bytes[at + 12], 4);
    directory->offset = little(&bytes[at + 16], 4);
    // A ZIP64 locator right before it is used whether or not a 32-bit field is saturated (as miniz does): its
    // record must sit right before the locator and agree with every 32-bit field that is not saturated.
    unsigned char locator[20];
    const bool zip64 = endOffset >= 20 && readAt(endOffset - 20, 20, locator) && little(locator, 4) == kZip64Locator;
    if (!zip64 && (directory->entries == 0xffff || directory->size == kSaturated || directory->offset == kSaturated)) {
        return "ZIP64 sizes without a ZIP64 locator";
    }
    if (zip64) {
        const std::uint64_t zip64End = little(locator + 8, 8);
        unsigned char record[56];
        if (endOffset < 76 || zip64End != endOffset - 76 || !readAt(zip64End, 56, record) || little(record, 4) != kZip64End) {
            return "the ZIP64 end of central directory is not right before its locator";
        }
        const std::uint64_t entries = little(record + 32, 8);
        const std::uint64_t size = little(record + 40, 8);
        const std::uint64_t offset = little(record + 48, 8);
        if ((directory->entries != 0xffff && directory->entries != entries) || (directory->size != kSaturated && directory->size != size) ||
            (directory->offset != kSaturated && directory->offset != offset)) {
            return "the ZIP64 and 32-bit ends of central directory disagree";
        }
        directory->entries = entries;
        directory->size = size;
        directory->offset = offset;
    }
    if (directory->offset > fileSize || directory->size > fileSize - directory->offset) return "the central directory lies outside the file";
    if (directory->entries > directory->size / kEntryBytes) return "more records than its central directory can hold";
    return {};
}

} // namespace

std::string zipDirectoryProblem(std::uint64_t fileSize, const ReadAt& readAt)
{
    Directory directory;
    if (const std::string problem = findDirectory(fileSize, readAt, &directory); !problem.empty()) return problem;
    std::vector<unsigned char> bytes(static_cast<std::size_t>(directory.size));
    if (!bytes.empty() && !readAt(directory.offset, bytes.size(), bytes.data())) return "the central directory is unreadable";
    std::size_t at = 0;
    std::vector<Extent> extents;
    for (std::uint64_t index = 0; index < directory.entries; ++index) {
        if (at + kEntryBytes > bytes.size() || little(&bytes[at], 4) != kDirectoryEntry) return "a damaged central directory";
        const unsigned char* header = &bytes[at];
        const auto nameLength = static_cast<std::size_t>(little(header + 28, 2));
        const auto extraLength = static_cast<std::size_t>(little(header + 30, 2));
        const auto commentLength = static_cast<std::size_t>(little(header + 32, 2));
        if (at + kEntryBytes + nameLength + extraLength + commentLength > bytes.size()) return "a damaged central directory";
        Entry entry;
        entry.name.assign(reinterpret_cast<const char*>(header + kEntryBytes), nameLength);
        entry.method = static_cast<std::uint16_t>(little(header + 10, 2));
        entry.compressed = little(header + 20, 4);
        entry.uncompressed = little(header + 24, 4);
        entry.localOffset = little(header + 42, 4);
        if (!readZip64Extra(header + kEntryBytes + nameLength, extraLength, &entry, entry.uncompressed == kSaturated,
                            entry.compressed == kSaturated, entry.localOffset == kSaturated)) {
            return (entry.name.empty() ? std::string("?") : entry.name) + ": a damaged ZIP64 extra field";
        }
        Extent extent{};
        if (const std::string problem = checkRecord(entry, fileSize, readAt, &extent); !problem.empty()) return problem;
        extents.push_back(std::move(extent));
        at += kEntryBytes + nameLength + extraLength + commentLength;
    }
    // Records share no bytes and no names: otherwise a file's size would bound each record, not their sum.
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.start < b.start; });
    for (std::size_t i = 1; i < extents.size(); ++i) {
        if (extents[i].start < extents[i - 1].end) return extents[i].name + ": overlaps " + extents[i - 1].name;
    }
    std::sort(extents.begin(), extents.end(), [](const Extent& a, const Extent& b) { return a.name < b.name; });
    for (std::size_t i = 1; i < extents.size(); ++i) {
        if (extents[i].name == extents[i - 1].name) return extents[i].name + ": named twice";
    }
    return {};
}

std::string pickleLengthProblem(const unsigned char* data, std::size_t size)
{
    std::size_t at = 0;
    std::uint64_t memoized = 0;
    const auto remaining = [&] { return static_cast<std::uint64_t>(size - at); };
    const auto tooLong = [&](std::uint64_t length, const char* what) {
        return std::string(what) + " of " + std::to_string(length) + " bytes at offset " + std::to_string(at) + " where " +
               std::to_string(remaining()) + " remain";
    };
    while (at < size) {
        const unsigned char opcode = data[at++];
        int lengthBytes = 0;   // a length of this many bytes, then that many bytes of data
        int fixedBytes = 0;    // arguments of fixed size
        int lines = 0;         // newline-terminated arguments
        switch (opcode) {
        case '.': return {};   // STOP
        case 'T': case 'X': case 'B': lengthBytes = 4; break;          // BINSTRING, BINUNICODE, BINBYTES
        case 'U': case 0x8c: case 'C': case 0x8a: lengthBytes = 1; break; // SHORT_BINSTRING, SHORT_BINUNICODE, SHORT_BINBYTES, LONG1
        case 0x8b: lengthBytes = 4; break;                              // LONG4
        case 0x8d: case 0x8e: case 0x96: lengthBytes = 8; break;        // BINUNICODE8, BINBYTES8, BYTEARRAY8
        case 0x95:                                                      // FRAME: a length hint for what follows
            if (remaining() < 8) return "a truncated frame header";
            if (little(data + at, 8) > remaining() - 8) return tooLong(little(data + at, 8), "a frame");
            at += 8;
            continue;
        case 'q': case 'r': {                                           // BINPUT, LONG_BINPUT: a memo index
            const int bytes = opcode == 'q' ? 1 : 4;
            if (remaining() < static_cast<std::uint64_t>(bytes)) return "a truncated memo index";
            const std::uint64_t index = little(data + at, bytes);
            if (index > memoized) {
                return "memo index " + std::to_string(index) + " at offset " + std::to_string(at) + " after " + std::to_string(memoized) + " entries";
            }
            ++memoized;
            at += static_cast<std::size_t>(bytes);
            continue;
        }
        case 0x94: ++memoized; continue;                                // MEMOIZE
        case 'J': case 'j': case 0x84: fixedBytes = 4; break;           // BININT, LONG_BINGET, EXT4
        case 'K': case 'h': case 0x80: case 0x82: fixedBytes = 1; break; // BININT1, BINGET, PROTO, EXT1
        case 'M': case 0x83: fixedBytes = 2; break;                     // BININT2, EXT2
        case 'G': fixedBytes = 8; break;                                // BINFLOAT
        case 'I': case 'L': case 'F': case 'S': case 'V': case 'P': case 'g': case 'p': lines = 1; break;
        case 'c': case 'i': lines = 2; break;                           // GLOBAL, INST
        case '(': case ')': case ']': case '}': case 0x8f: case 0x90: case 0x91: case 'a': case 'e': case 's': case 'u':
        case 't': case 0x85: case 0x86: case 0x87: case 'R': case 'b': case 'N': case 0x88: case 0x89: case '0': case '1':
        case '2': case 0x81: case 0x92: case 'Q': case 'o': case 0x93: case 0x97: case 0x98: case 'l': case 'd':
            continue;
        default:
            return {}; // LibTorch refuses an opcode it does not know before it reads past it
        }
        if (lengthBytes > 0) {
            if (remaining() < static_cast<std::uint64_t>(lengthBytes)) return "a truncated length";
            const std::uint64_t length = little(data + at, lengthBytes);
            at += static_cast<std::size_t>(lengthBytes);
            if (length > remaining()) return tooLong(length, "a string or bytes");
            at += static_cast<std::size_t>(length);
        } else if (fixedBytes > 0) {
            if (remaining() < static_cast<std::uint64_t>(fixedBytes)) return "a truncated argument";
            at += static_cast<std::size_t>(fixedBytes);
        }
        for (int line = 0; line < lines; ++line) {
            const void* newline = std::memchr(data + at, '\n', size - at);
            if (!newline) return "an argument without its end of line";
            at = static_cast<std::size_t>(static_cast<const unsigned char*>(newline) - data) + 1;
        }
    }
    return "no STOP opcode";
}

} // namespace ringmaster::trainer
