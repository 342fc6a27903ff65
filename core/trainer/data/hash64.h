#pragma once
// Small 64-bit hashing pieces shared by the data cache's fingerprint (cache_fingerprint.cpp) and its
// payload checksum (shared_cache.cpp): FNV's constants, splitmix64's finaliser and fixed-width hex. Not
// cryptographic: they tell files and datasets apart, they do not defend against forgery.

#include <cstdint>
#include <cstdio>
#include <string>

namespace ringmaster::trainer::hash64 {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

inline std::string hex64(std::uint64_t value)
{
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

inline std::uint64_t mix64(std::uint64_t x) // splitmix64's finaliser: spreads every input bit over the output
{
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// The cache file's name is <fingerprint><kDataCacheExtension>; the version is part of the file's prefix
// and of every fingerprint, so a new layout never reads an old file.
constexpr const char* kDataCacheExtension = ".rmdata";
constexpr std::uint32_t kDataCacheFormatVersion = 1;

} // namespace ringmaster::trainer::hash64
