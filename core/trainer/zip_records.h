#pragma once
// Checks the records of a zip archive (a checkpoint, a torch.save file) before LibTorch reads it: each record
// is read through libarchive and its CRC-32 compared. LibTorch's own reader (miniz, built with
// MINIZ_DISABLE_ZIP_READER_CRC32_CHECKS) compares none, so a flipped byte would load silently, or, inside
// data.pkl, send LibTorch's unpickler after a length it allocates before checking (1 GiB asked for by a 1 KiB
// file, found by tests/fuzz/fuzz_tensor_file.cpp). Records are streamed through a 1 MiB buffer, never held whole.
// First the central directory and the pickles are checked for sizes that would make LibTorch allocate more
// than the file holds (zip_directory.h). A file built to pass these checks still reaches LibTorch's reader:
// this finds damage and bounds allocations; it is no sandbox.

#include <cstddef>
#include <string>

namespace ringmaster::trainer {

// "" when the archive has at least one record and every record reads with its CRC-32 intact; otherwise the
// damage in a few words ("data.pkl: ZIP bad CRC", "no records").
std::string zipRecordDamage(const std::string& path);
std::string zipRecordDamage(const void* data, std::size_t size);

} // namespace ringmaster::trainer
