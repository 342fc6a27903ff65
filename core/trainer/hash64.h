#pragma once
// Small 64-bit hashing pieces: FNV-1a, splitmix64's finaliser and fixed-width hex, shared by the data
// cache's fingerprint and checksum (data/), the replica digest (trainer.cpp) and the model signature
// (models/scripted_model.cpp). Not cryptographic: they tell files, datasets and replicas apart, they do
// not defend against forgery.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace ringmaster::trainer::hash64 {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

// FNV-1a over `size` bytes, continuing from `hash` (so several buffers hash as their concatenation).
inline std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = kFnvOffset)
{
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * kFnvPrime;
    return hash;
}

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

} // namespace ringmaster::trainer::hash64
