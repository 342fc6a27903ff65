#pragma once
// The authentication of the TCP reporting endpoint (wire.h), shared by the trainer, the supervisor and (in
// Python's hmac) the helper module. Over TCP the kernel cannot vouch for the peer and anyone on the path may
// read the bytes, so the run's token never crosses the wire: the supervisor opens each connection with a fresh
// random nonce, the client's hello proves it holds the token with helloMac(), and every later frame carries
// frameMac() over the nonce, its sequence number (1, 2, ... on that connection) and its exact bytes. A frame
// copied from one connection into another, repeated, reordered or changed fails its check, so nothing seen on
// the network can forge rank 0's steps or final status. HMAC-SHA256 (Nettle), as lowercase hex.
// Plain C++17 (no Qt, no LibTorch).

#include <cstdint>
#include <string>

namespace ringmaster::protocol {

inline constexpr int kMacHexLength = 64;
inline constexpr int kNonceBytes = 16;

// HMAC-SHA256(key, message) as 64 lowercase hex digits.
std::string hmacSha256Hex(const std::string& key, const std::string& message);

// The hello's "mac": HMAC(token, "ringmaster hello\n" NONCE "\n" RANK "\n" PID).
std::string helloMac(const std::string& token, const std::string& nonce, long long rank, long long pid);

// A frame's MAC: HMAC(token, NONCE "\n" SEQUENCE "\n" FRAME), FRAME the JSON without its newline.
std::string frameMac(const std::string& token, const std::string& nonce, std::uint64_t sequence, const std::string& frame);

// Equal MACs (or any secrets), in a time that does not depend on where they first differ.
bool sameSecret(const std::string& a, const std::string& b);

} // namespace ringmaster::protocol
