#include "protocol/frame_mac.h"

#include <nettle/hmac.h>

namespace ringmaster::protocol {

std::string hmacSha256Hex(const std::string& key, const std::string& message)
{
    hmac_sha256_ctx context;
    hmac_sha256_set_key(&context, key.size(), reinterpret_cast<const std::uint8_t*>(key.data()));
    hmac_sha256_update(&context, message.size(), reinterpret_cast<const std::uint8_t*>(message.data()));
    std::uint8_t digest[SHA256_DIGEST_SIZE];
    hmac_sha256_digest(&context, sizeof digest, digest);
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(2 * sizeof digest);
    for (const std::uint8_t byte : digest) {
        hex.push_back(digits[byte >> 4]);
        hex.push_back(digits[byte & 0x0f]);
    }
    return hex;
}

std::string helloMac(const std::string& token, const std::string& nonce, long long rank, long long pid)
{
    return hmacSha256Hex(token, "ringmaster hello\n" + nonce + "\n" + std::to_string(rank) + "\n" + std::to_string(pid));
}

std::string frameMac(const std::string& token, const std::string& nonce, std::uint64_t sequence, const std::string& frame)
{
    return hmacSha256Hex(token, nonce + "\n" + std::to_string(sequence) + "\n" + frame);
}

bool sameSecret(const std::string& a, const std::string& b)
{
    if (a.size() != b.size()) return false;
    unsigned char difference = 0;
    for (std::size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i]);
    return difference == 0;
}

} // namespace ringmaster::protocol
