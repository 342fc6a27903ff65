#pragma once
// The part of a zip archive that LibTorch believes: its central directory. PyTorch's reader (miniz inside
// caffe2::serialize::PyTorchStreamReader) allocates each record at the uncompressed size the central directory
// states before reading it, and LibTorch's unpickler allocates each string or byte array at the length its
// opcode states before checking that the data holds that many bytes. A small file can therefore ask for
// gigabytes. Every checkpoint, tensor file and TorchScript model is checked here first (zip_records.h):
//   - the end record is the one LibTorch's reader takes (the last), with nothing after it; a ZIP64 record must
//     sit right before its locator and agree with the 32-bit fields; records share no bytes and no names;
//   - every record lies inside the file; a stored one states the same size twice, so it cannot ask for more
//     memory than the file's own size; a deflated one (torch.jit.save deflates code/*.py and *.debug_pkl)
//     inflates to at most deflate's best ratio of its size and 64 MiB; other compression methods are refused;
//   - every pickle record (*.pkl, *.debug_pkl; inflated first when deflated, at most 256 MiB) is walked opcode by opcode: a length or a memo index that points past the
//     record's end is refused (the walk stops, content unchecked, at an opcode it does not know: LibTorch
//     refuses those itself, before it reads further).
// This bounds what a file can make LibTorch allocate; it does not make the file's content safe to run: a
// TorchScript model is code (see docs/trainer.md at --model).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace ringmaster::trainer {

// Reads SIZE bytes at OFFSET into OUT; false when the source has fewer.
using ReadAt = std::function<bool(std::uint64_t offset, std::size_t size, void* out)>;

// "" when the central directory and every pickle record are within the bounds above; else the problem in a
// few words ("data/0: stored size 4294967295 bytes, more than the file's 912").
std::string zipDirectoryProblem(std::uint64_t fileSize, const ReadAt& readAt);

// The pickle check alone, on one record's bytes (exposed for tests and the fuzz target).
std::string pickleLengthProblem(const unsigned char* data, std::size_t size);

} // namespace ringmaster::trainer
