#include "protocol/tensorboard_records.h"

#include <array>
#include <charconv>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>

#include <unistd.h>

namespace ringmaster::protocol::tensorboard {

std::string nextEventFilePath(const std::string& folder)
{
    long long seconds = static_cast<long long>(std::time(nullptr));
    std::error_code error;
    const std::string prefix = kEventFilePrefix;
    for (std::filesystem::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
        const std::string name = it->path().filename().string();
        if (name.rfind(prefix, 0) != 0) continue;
        long long existing = 0;
        const auto [rest, parsed] = std::from_chars(name.data() + prefix.size(), name.data() + name.size(), existing);
        if (parsed == std::errc() && existing >= seconds) seconds = existing + 1;
    }
    constexpr std::size_t kHostNameBytes = 256;
    char host[kHostNameBytes] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || host[0] == '\0') std::strcpy(host, "localhost");
    const std::string name = prefix + std::to_string(seconds) + "." + host + "." + std::to_string(static_cast<long>(::getpid()));
    return (std::filesystem::path(folder) / name).string();
}
namespace {

constexpr std::uint32_t kCastagnoliReflected = 0x82F63B78u;

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/).
enum WireType : std::uint32_t {
    kVarint = 0,
    kFixed64 = 1,
    kLengthDelimited = 2,
    kStartGroup = 3,
    kEndGroup = 4,
    kFixed32 = 5,
};

// Field numbers, checked against tensorflow's event.proto, summary.proto, tensor.proto and tensor_shape.proto.
constexpr std::uint32_t kEventWallTime = 1;
constexpr std::uint32_t kEventStep = 2;
constexpr std::uint32_t kEventFileVersion = 3;
constexpr std::uint32_t kEventSummary = 5;
constexpr std::uint32_t kSummaryValue = 1;
constexpr std::uint32_t kValueTag = 1;
constexpr std::uint32_t kValueSimpleValue = 2;
// The other members of Value's `value` oneof: obsolete histogram, image, histo, audio. Seeing one after a
// scalar replaces it, as protobuf's oneof does.
constexpr std::uint32_t kValueOtherOneofFirst = 3;
constexpr std::uint32_t kValueOtherOneofLast = 6;
constexpr std::uint32_t kValueTensor = 8;
constexpr std::uint32_t kTensorDtype = 1;
constexpr std::uint32_t kTensorShape = 2;
constexpr std::uint32_t kTensorContent = 4;
constexpr std::uint32_t kTensorFloatVal = 5;
constexpr std::uint32_t kTensorDoubleVal = 6;
constexpr std::uint32_t kShapeDim = 2;
constexpr std::uint32_t kShapeUnknownRank = 3;
constexpr std::uint32_t kDimSize = 1;
constexpr std::uint64_t kDtFloat = 1;
constexpr std::uint64_t kDtDouble = 2;
constexpr int kMaxVarintBytes = 10;
constexpr std::uint32_t kMaxFieldNumber = (1u << 29) - 1;

std::array<std::uint32_t, 256> makeCrcTable()
{
    std::array<std::uint32_t, 256> table{};
    for (std::uint32_t byte = 0; byte < 256; ++byte) {
        std::uint32_t crc = byte;
        for (int bit = 0; bit < 8; ++bit) crc = (crc & 1u) ? (crc >> 1) ^ kCastagnoliReflected : crc >> 1;
        table[byte] = crc;
    }
    return table;
}

void putFixed32(std::string& out, std::uint32_t value)
{
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xffu));
}

void putFixed64(std::string& out, std::uint64_t value)
{
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xffu));
}

std::uint32_t getFixed32(const char* p)
{
    std::uint32_t value = 0;
    for (int i = 0; i < 4; ++i) value |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    return value;
}

std::uint64_t getFixed64(const char* p)
{
    std::uint64_t value = 0;
    for (int i = 0; i < 8; ++i) value |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
    return value;
}

// ---- protobuf encoding ----

void putVarint(std::string& out, std::uint64_t value)
{
    while (value >= 0x80u) {
        out.push_back(static_cast<char>((value & 0x7fu) | 0x80u));
        value >>= 7;
    }
    out.push_back(static_cast<char>(value));
}

void putKey(std::string& out, std::uint32_t field, WireType type) { putVarint(out, (std::uint64_t{field} << 3) | type); }

void putDouble(std::string& out, std::uint32_t field, double value)
{
    std::uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    putKey(out, field, kFixed64);
    putFixed64(out, bits);
}

void putFloat(std::string& out, std::uint32_t field, float value)
{
    std::uint32_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    putKey(out, field, kFixed32);
    putFixed32(out, bits);
}

void putBytes(std::string& out, std::uint32_t field, std::string_view bytes)
{
    putKey(out, field, kLengthDelimited);
    putVarint(out, bytes.size());
    out.append(bytes.data(), bytes.size());
}

// ---- protobuf decoding: every read is bounds-checked; false means malformed ----

class Reader
{
public:
    explicit Reader(std::string_view bytes) : m_bytes(bytes) {}

    bool atEnd() const { return m_pos == m_bytes.size(); }

    bool varint(std::uint64_t& value)
    {
        value = 0;
        for (int i = 0; i < kMaxVarintBytes; ++i) {
            if (m_pos >= m_bytes.size()) return false;
            const auto byte = static_cast<unsigned char>(m_bytes[m_pos++]);
            if (i == kMaxVarintBytes - 1 && byte > 1) return false; // more than 64 bits
            value |= static_cast<std::uint64_t>(byte & 0x7fu) << (7 * i);
            if (!(byte & 0x80u)) return true;
        }
        return false;
    }

    bool key(std::uint32_t& field, std::uint32_t& type)
    {
        std::uint64_t key = 0;
        if (!varint(key)) return false;
        type = static_cast<std::uint32_t>(key & 7u);
        const std::uint64_t number = key >> 3;
        if (number == 0 || number > kMaxFieldNumber) return false;
        field = static_cast<std::uint32_t>(number);
        return true;
    }

    bool fixed32(std::uint32_t& value)
    {
        if (m_bytes.size() - m_pos < 4) return false;
        value = getFixed32(m_bytes.data() + m_pos);
        m_pos += 4;
        return true;
    }

    bool fixed64(std::uint64_t& value)
    {
        if (m_bytes.size() - m_pos < 8) return false;
        value = getFixed64(m_bytes.data() + m_pos);
        m_pos += 8;
        return true;
    }

    bool lengthDelimited(std::string_view& bytes)
    {
        std::uint64_t length = 0;
        if (!varint(length) || length > m_bytes.size() - m_pos) return false;
        bytes = m_bytes.substr(m_pos, static_cast<std::size_t>(length));
        m_pos += static_cast<std::size_t>(length);
        return true;
    }

    // Skips a field this decoder does not use. Groups (deprecated, never in these messages) and the
    // reserved wire types 6 and 7 are malformed input.
    bool skip(std::uint32_t type)
    {
        std::uint64_t ignoredNumber = 0;
        std::uint32_t ignored32 = 0;
        std::string_view ignoredBytes;
        switch (type) {
        case kVarint: return varint(ignoredNumber);
        case kFixed64: return fixed64(ignoredNumber);
        case kLengthDelimited: return lengthDelimited(ignoredBytes);
        case kFixed32: return fixed32(ignored32);
        default: return false;
        }
    }

private:
    std::string_view m_bytes;
    std::size_t m_pos = 0;
};

double doubleFromBits(std::uint64_t bits)
{
    double value = 0.0;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

float floatFromBits(std::uint32_t bits)
{
    float value = 0.0f;
    std::memcpy(&value, &bits, sizeof value);
    return value;
}

// A TensorProto, as far as a scalar needs it. Repeated occurrences merge as protobuf merges them.
struct Tensor
{
    std::uint64_t dtype = 0;
    bool unknownRank = false;
    bool oneElement = true; // every dimension seen has size 1 (no dimensions: a rank-0 tensor)
    std::string_view content;
    std::vector<float> floats;
    std::vector<double> doubles;
};

bool decodeDim(std::string_view bytes, Tensor& tensor)
{
    Reader in(bytes);
    std::int64_t size = 0;
    while (!in.atEnd()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!in.key(field, type)) return false;
        if (field == kDimSize && type == kVarint) {
            std::uint64_t raw = 0;
            if (!in.varint(raw)) return false;
            size = static_cast<std::int64_t>(raw);
        } else if (!in.skip(type)) {
            return false;
        }
    }
    if (size != 1) tensor.oneElement = false; // 0, several, or -1 (unknown)
    return true;
}

bool decodeShape(std::string_view bytes, Tensor& tensor)
{
    Reader in(bytes);
    while (!in.atEnd()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!in.key(field, type)) return false;
        if (field == kShapeDim && type == kLengthDelimited) {
            std::string_view dim;
            if (!in.lengthDelimited(dim) || !decodeDim(dim, tensor)) return false;
        } else if (field == kShapeUnknownRank && type == kVarint) {
            std::uint64_t flag = 0;
            if (!in.varint(flag)) return false;
            tensor.unknownRank = flag != 0;
        } else if (!in.skip(type)) {
            return false;
        }
    }
    return true;
}

bool decodeTensor(std::string_view bytes, Tensor& tensor)
{
    Reader in(bytes);
    while (!in.atEnd()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!in.key(field, type)) return false;
        if (field == kTensorDtype && type == kVarint) {
            if (!in.varint(tensor.dtype)) return false;
        } else if (field == kTensorShape && type == kLengthDelimited) {
            std::string_view shape;
            if (!in.lengthDelimited(shape) || !decodeShape(shape, tensor)) return false;
        } else if (field == kTensorContent && type == kLengthDelimited) {
            if (!in.lengthDelimited(tensor.content)) return false;
        } else if (field == kTensorFloatVal && type == kFixed32) {
            std::uint32_t bits = 0;
            if (!in.fixed32(bits)) return false;
            tensor.floats.push_back(floatFromBits(bits));
        } else if (field == kTensorFloatVal && type == kLengthDelimited) { // packed
            std::string_view packed;
            if (!in.lengthDelimited(packed) || packed.size() % 4 != 0) return false;
            for (std::size_t i = 0; i < packed.size(); i += 4) tensor.floats.push_back(floatFromBits(getFixed32(packed.data() + i)));
        } else if (field == kTensorDoubleVal && type == kFixed64) {
            std::uint64_t bits = 0;
            if (!in.fixed64(bits)) return false;
            tensor.doubles.push_back(doubleFromBits(bits));
        } else if (field == kTensorDoubleVal && type == kLengthDelimited) { // packed
            std::string_view packed;
            if (!in.lengthDelimited(packed) || packed.size() % 8 != 0) return false;
            for (std::size_t i = 0; i < packed.size(); i += 8) tensor.doubles.push_back(doubleFromBits(getFixed64(packed.data() + i)));
        } else if (!in.skip(type)) {
            return false;
        }
    }
    return true;
}

// The tensor's value when it is a one-element DT_FLOAT or DT_DOUBLE tensor.
std::optional<double> scalarOf(const Tensor& tensor)
{
    if (tensor.unknownRank || !tensor.oneElement) return std::nullopt;
    if (tensor.dtype == kDtFloat) {
        if (!tensor.content.empty()) {
            if (tensor.content.size() != 4) return std::nullopt;
            return floatFromBits(getFixed32(tensor.content.data()));
        }
        if (tensor.floats.size() == 1) return tensor.floats.front();
    } else if (tensor.dtype == kDtDouble) {
        if (!tensor.content.empty()) {
            if (tensor.content.size() != 8) return std::nullopt;
            return doubleFromBits(getFixed64(tensor.content.data()));
        }
        if (tensor.doubles.size() == 1) return tensor.doubles.front();
    }
    return std::nullopt;
}

enum class ValueKind { None, Simple, Tensor, Other };

bool decodeValue(std::string_view bytes, Event& event)
{
    Reader in(bytes);
    std::string_view tag;
    ValueKind kind = ValueKind::None;
    float simple = 0.0f;
    Tensor tensor;
    while (!in.atEnd()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!in.key(field, type)) return false;
        if (field == kValueTag && type == kLengthDelimited) {
            if (!in.lengthDelimited(tag)) return false;
        } else if (field == kValueSimpleValue && type == kFixed32) {
            std::uint32_t bits = 0;
            if (!in.fixed32(bits)) return false;
            simple = floatFromBits(bits);
            kind = ValueKind::Simple;
        } else if (field == kValueTensor && type == kLengthDelimited) {
            std::string_view tensorBytes;
            if (!in.lengthDelimited(tensorBytes)) return false;
            if (kind != ValueKind::Tensor) tensor = Tensor{}; // a oneof switching member starts afresh
            if (!decodeTensor(tensorBytes, tensor)) return false;
            kind = ValueKind::Tensor;
        } else {
            if (field >= kValueOtherOneofFirst && field <= kValueOtherOneofLast) kind = ValueKind::Other;
            if (!in.skip(type)) return false;
        }
    }
    std::optional<double> value;
    if (kind == ValueKind::Simple) value = simple;
    if (kind == ValueKind::Tensor) value = scalarOf(tensor);
    if (value) event.scalars.push_back({std::string(tag), *value});
    return true;
}

bool decodeSummary(std::string_view bytes, Event& event)
{
    Reader in(bytes);
    while (!in.atEnd()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!in.key(field, type)) return false;
        if (field == kSummaryValue && type == kLengthDelimited) {
            std::string_view value;
            if (!in.lengthDelimited(value) || !decodeValue(value, event)) return false;
        } else if (!in.skip(type)) {
            return false;
        }
    }
    return true;
}

} // namespace

std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc)
{
    static const std::array<std::uint32_t, 256> table = makeCrcTable();
    const auto* bytes = static_cast<const unsigned char*>(data);
    crc = ~crc;
    for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ bytes[i]) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

std::uint32_t maskCrc(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kCrcMaskDelta; }

std::uint32_t unmaskCrc(std::uint32_t masked)
{
    const std::uint32_t rotated = masked - kCrcMaskDelta;
    return (rotated >> 17) | (rotated << 15);
}

std::string frameRecord(std::string_view data)
{
    std::string record;
    record.reserve(kRecordHeaderBytes + data.size() + kRecordFooterBytes);
    putFixed64(record, data.size());
    putFixed32(record, maskCrc(crc32c(record.data(), kLengthBytes)));
    record.append(data.data(), data.size());
    putFixed32(record, maskCrc(crc32c(data.data(), data.size())));
    return record;
}

RecordRead readRecord(std::string_view bytes)
{
    RecordRead read;
    if (bytes.size() < kRecordHeaderBytes) return read;
    if (maskCrc(crc32c(bytes.data(), kLengthBytes)) != getFixed32(bytes.data() + kLengthBytes)) {
        read.status = RecordStatus::BadLengthCrc;
        return read;
    }
    const std::uint64_t length = getFixed64(bytes.data());
    if (length > kMaxPlausibleRecordDataBytes) {
        // A checksum that passes on an absurd length is not a record this format would hold: treat the framing as lost.
        read.status = RecordStatus::BadLengthCrc;
        return read;
    }
    if (length > kMaxRecordDataBytes) {
        // Sound (its checksum passed) but too long to hold: its total size is known, so it can be stepped over.
        read.status = RecordStatus::TooLarge;
        read.recordBytes = kRecordHeaderBytes + length + kRecordFooterBytes;
        return read;
    }
    read.recordBytes = kRecordHeaderBytes + length + kRecordFooterBytes;
    if (bytes.size() < read.recordBytes) return read; // Incomplete
    const std::string_view data = bytes.substr(kRecordHeaderBytes, static_cast<std::size_t>(length));
    const std::uint32_t stored = getFixed32(bytes.data() + kRecordHeaderBytes + length);
    if (maskCrc(crc32c(data.data(), data.size())) != stored) {
        read.status = RecordStatus::BadDataCrc;
        return read;
    }
    read.status = RecordStatus::Complete;
    read.data = data;
    return read;
}

std::string encodeFileVersionEvent(double wallTime, std::string_view fileVersion)
{
    std::string event;
    putDouble(event, kEventWallTime, wallTime);
    putBytes(event, kEventFileVersion, fileVersion);
    return event;
}

std::string encodeScalarEvent(double wallTime, std::int64_t step, std::string_view tag, float value)
{
    std::string valueBytes;
    putBytes(valueBytes, kValueTag, tag);
    putFloat(valueBytes, kValueSimpleValue, value);
    std::string summary;
    putBytes(summary, kSummaryValue, valueBytes);
    std::string event;
    putDouble(event, kEventWallTime, wallTime);
    putKey(event, kEventStep, kVarint);
    putVarint(event, static_cast<std::uint64_t>(step)); // int64: negative values take ten bytes, as protobuf does
    putBytes(event, kEventSummary, summary);
    return event;
}

std::optional<Event> decodeEvent(std::string_view data)
{
    Event event;
    Reader in(data);
    while (!in.atEnd()) {
        std::uint32_t field = 0;
        std::uint32_t type = 0;
        if (!in.key(field, type)) return std::nullopt;
        if (field == kEventWallTime && type == kFixed64) {
            std::uint64_t bits = 0;
            if (!in.fixed64(bits)) return std::nullopt;
            event.wallTime = doubleFromBits(bits);
        } else if (field == kEventStep && type == kVarint) {
            std::uint64_t raw = 0;
            if (!in.varint(raw)) return std::nullopt;
            event.step = static_cast<std::int64_t>(raw);
        } else if (field == kEventFileVersion && type == kLengthDelimited) {
            std::string_view version;
            if (!in.lengthDelimited(version)) return std::nullopt;
            event.fileVersion.assign(version.data(), version.size());
        } else if (field == kEventSummary && type == kLengthDelimited) {
            // Two summary fields merge: their values are concatenated.
            std::string_view summary;
            if (!in.lengthDelimited(summary) || !decodeSummary(summary, event)) return std::nullopt;
        } else if (!in.skip(type)) {
            return std::nullopt;
        }
    }
    return event;
}

ScanResult scanEvents(std::string_view bytes, const std::function<void(const Event&)>& onEvent)
{
    ScanResult result;
    while (result.consumed < bytes.size()) {
        const std::string_view rest = bytes.substr(result.consumed);
        const RecordRead read = readRecord(rest);
        switch (read.status) {
        case RecordStatus::Incomplete: return result;
        case RecordStatus::BadLengthCrc: result.framingLost = true; return result;
        case RecordStatus::TooLarge:
            if (read.recordBytes > rest.size()) {
                result.pendingSkipBytes = read.recordBytes;
                return result;
            }
            ++result.oversizedRecords;
            break;
        case RecordStatus::BadDataCrc: ++result.badDataRecords; break;
        case RecordStatus::Complete:
            if (const auto event = decodeEvent(read.data)) {
                onEvent(*event);
            } else {
                ++result.undecodableRecords;
            }
            break;
        }
        result.consumed += static_cast<std::size_t>(read.recordBytes);
    }
    return result;
}

} // namespace ringmaster::protocol::tensorboard
