#pragma once
// Names shared by the data cache's two halves (cache_fingerprint.cpp, shared_cache.cpp): the cache file's
// name is <fingerprint><kDataCacheExtension>; the version is part of the file's prefix and of every
// fingerprint, so a new layout never reads an old file.

#include <cstdint>

#include "trainer/hash64.h"

namespace ringmaster::trainer::hash64 {

constexpr const char* kDataCacheExtension = ".rmdata";
constexpr std::uint32_t kDataCacheFormatVersion = 1;

} // namespace ringmaster::trainer::hash64
