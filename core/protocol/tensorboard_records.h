#pragma once
// The TensorBoard event-file format, written and read in one place (plain C++17: no Qt, no LibTorch), so
// that the trainer's writer (core/trainer/tensorboard_writer.*) and the supervisor's follower of a user
// script's event files (core/supervisor/tensorboard_follower.*) cannot disagree about a single byte.
//
// An event file (events.out.tfevents.<unix seconds>.<host>.<pid>) is a sequence of TFRecords:
//   uint64 length (little-endian) | uint32 masked CRC-32C of those 8 bytes | data | uint32 masked CRC-32C of data
// with CRC-32C the Castagnoli CRC (reflected polynomial 0x82F63B78) and the mask
// ((crc >> 15) | (crc << 17)) + 0xa282ead8. Each record's data is a serialised tensorflow.Event
// (tensorflow/core/util/event.proto, framework/summary.proto, framework/tensor.proto); only the fields
// below are understood, every other field of every wire type is skipped:
//   Event       { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
//   Summary     { repeated Value value = 1; }
//   Value       { string tag = 1; oneof { float simple_value = 2; ...; TensorProto tensor = 8; } }
//   TensorProto { DataType dtype = 1; TensorShapeProto tensor_shape = 2; bytes tensor_content = 4;
//                 repeated float float_val = 5; repeated double double_val = 6; }
//   TensorShapeProto { repeated Dim dim = 2; bool unknown_rank = 3; }  Dim { int64 size = 1; }
// A value is a scalar when it is a simple_value, or a one-element DT_FLOAT or DT_DOUBLE tensor (every dimension
// of size 1; the element in tensor_content or in float_val/double_val, packed or not).
//
// Decoding never reads outside the given bytes and rejects malformed input (a truncated varint, a length past
// the end, a group or reserved wire type, field number 0) by returning nothing: the reader is meant for files
// that other programs write, and it will be fuzzed.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ringmaster::protocol::tensorboard {

inline constexpr const char* kFileVersion = "brain.Event:2";
inline constexpr const char* kEventFilePrefix = "events.out.tfevents.";
inline constexpr std::uint32_t kCrcMaskDelta = 0xa282ead8u;
inline constexpr std::size_t kLengthBytes = 8;
inline constexpr std::size_t kRecordHeaderBytes = kLengthBytes + 4; // length + masked CRC of the length
inline constexpr std::size_t kRecordFooterBytes = 4;                // masked CRC of the data
// A record longer than this (with a valid length CRC) is skipped unread: scalars are tens of bytes, and a
// reader must not be made to hold an arbitrary amount of memory by one length field.
inline constexpr std::uint64_t kMaxRecordDataBytes = 4u * 1024 * 1024;
// A length past this is read as lost framing even when its checksum passes (and sizes never overflow).
inline constexpr std::uint64_t kMaxPlausibleRecordDataBytes = std::uint64_t{1} << 48;

// The path of a new event file in FOLDER, named as TensorBoard's own writers name theirs
// (events.out.tfevents.<unix seconds>.<host>.<pid>), its seconds past those of every event file already there:
// TensorBoard reads a folder's files in name order, so this one is read last (after a resume's cut file from the
// same second, or a pid with more digits). The trainer's tb/ and the launcher's tb/system/ both name files so.
std::string nextEventFilePath(const std::string& folder);

// CRC-32C of data, continuing from crc (0 for a fresh checksum).
std::uint32_t crc32c(const void* data, std::size_t size, std::uint32_t crc = 0);
std::uint32_t maskCrc(std::uint32_t crc);
std::uint32_t unmaskCrc(std::uint32_t masked);

// One TFRecord holding data, ready to append to a file.
std::string frameRecord(std::string_view data);

enum class RecordStatus {
    Complete,     // data is the record's payload; recordBytes were used
    Incomplete,   // the buffer ends inside the record: read again when more bytes have arrived
    BadLengthCrc, // the length's checksum fails (or the length is absurd): framing is lost, nothing after can be trusted
    BadDataCrc,   // the length is sound but the data's checksum fails: skip recordBytes
    TooLarge,     // the length is sound but over kMaxRecordDataBytes: skip recordBytes (maybe not all here yet)
};

struct RecordRead
{
    RecordStatus status = RecordStatus::Incomplete;
    std::uint64_t recordBytes = 0; // header + data + footer, known once the header is sound
    std::string_view data;         // Complete only; points into the given buffer
};

// Reads the record at the start of bytes.
RecordRead readRecord(std::string_view bytes);

// ---- Events ----

struct ScalarValue
{
    std::string tag;
    double value = 0.0;
};

struct Event
{
    double wallTime = 0.0;
    std::int64_t step = 0;
    std::string fileVersion;          // set on a file's first record
    std::vector<ScalarValue> scalars; // the summary's scalar values, in order; other kinds are skipped
};

// An Event holding only file_version (the first record of a file).
std::string encodeFileVersionEvent(double wallTime, std::string_view fileVersion = kFileVersion);
// An Event with one summary value {tag, simple_value}.
std::string encodeScalarEvent(double wallTime, std::int64_t step, std::string_view tag, float value);

// nullopt when data is not a well-formed Event.
std::optional<Event> decodeEvent(std::string_view data);

// ---- Walking a file's bytes ----

struct ScanResult
{
    std::size_t consumed = 0;           // bytes fully dealt with; the rest waits for more data
    bool framingLost = false;           // a length CRC failed at offset `consumed`: give up on this file
    std::size_t badDataRecords = 0;     // records skipped because their data CRC failed
    std::size_t undecodableRecords = 0; // records with sound checksums that are not an Event
    std::size_t oversizedRecords = 0;   // records over kMaxRecordDataBytes skipped
    // Scanning stopped at an oversized record that is not all in the buffer yet: once the file holds
    // `consumed + pendingSkipBytes` bytes, the reader may continue after it.
    std::uint64_t pendingSkipBytes = 0;
};

// Decodes every complete record in bytes, in order, and calls onEvent for each well-formed Event.
ScanResult scanEvents(std::string_view bytes, const std::function<void(const Event&)>& onEvent);

} // namespace ringmaster::protocol::tensorboard
