#pragma once
// A bare Unix-socket client for the benchmarks: they play a trainer (or an attacker) on the wire
// without Ringmaster's own Reporter in the way.

#include <QString>

#include <string>

namespace ringmaster::bench {

// Connected file descriptor, or -1.
int connectUnixSocket(const QString& path);
// Writes all bytes (stops quietly if the peer closed).
void sendAll(int fd, const std::string& bytes);

} // namespace ringmaster::bench
