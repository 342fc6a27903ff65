#pragma once
// The trainer -> supervisor wire protocol, shared by both sides (plain constants: no Qt, no LibTorch).
//
// Transport: a Unix domain socket whose path the supervisor passes in RINGMASTER_SOCKET, with a random
// per-run secret in RINGMASTER_TOKEN. Framing: one JSON object per line ('\n'-terminated, UTF-8),
// at most kMaxFrameBytes including the newline; a longer frame closes the connection.
// Every frame carries "v" (kProtocolVersion) and "type". The first frame on a connection must be:
//   {"v":1,"type":"hello","rank":R,"pid":P,"token":"..."}
// A wrong token, a wrong version or a malformed frame closes that connection; nothing it sent is used.
// Then, from rank 0 only:
//   {"type":"step","step":S,"epoch":E,"loss":L,"lr":X,"samples_per_sec":T,"wall_time":W}
//   {"type":"eval","epoch":E,"step":S,"val_loss":L,"val_accuracy":A}
//   {"type":"checkpoint","step":S,"path":"..."}
//   {"type":"status","status":"running|stopping|completed|stopped|failed","message":"...","total_steps":N}
// and from every rank, at least every kHeartbeatIntervalMs while it makes progress:
//   {"type":"heartbeat","step":S,"phase":"loading|rendezvous|train|eval|checkpoint|done"}

namespace ringmaster::protocol {

inline constexpr int kProtocolVersion = 1;
inline constexpr int kMaxFrameBytes = 64 * 1024;
inline constexpr int kHeartbeatIntervalMs = 1000;
inline constexpr const char* kSocketEnv = "RINGMASTER_SOCKET";
inline constexpr const char* kTokenEnv = "RINGMASTER_TOKEN";

} // namespace ringmaster::protocol
