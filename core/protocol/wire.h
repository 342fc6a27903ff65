#pragma once
// The trainer -> supervisor wire protocol, shared by both sides (plain constants: no Qt, no LibTorch).
// Every frame type and key is spelled once, here; both sides use these names instead of literals.
//
// Transport: a Unix domain socket whose path the supervisor passes in RINGMASTER_SOCKET, with a random
// per-run secret in RINGMASTER_TOKEN. Under Slurm a rank may run on another node, where that path
// reaches nothing: the supervisor then also opens a TCP endpoint and passes it as RINGMASTER_ENDPOINT
// ("HOST:PORT", HOST an IPv4/IPv6 address or a name); a rank tries the socket first and the endpoint
// when the socket is absent or refuses. Over TCP the kernel cannot vouch for the peer's pid and the bytes may be
// read on the way, so the token never crosses the wire (frame_mac.h): the supervisor's first line is
//   {"v":1,"type":"challenge","nonce":"<32 hex digits, fresh per connection>"}
// the hello carries "mac" (helloMac) instead of "token", and every later line is "<frameMac> <frame>": the MAC
// of that frame's JSON text with the nonce and its sequence number (1, 2, ...), so a frame replayed, reordered,
// changed or copied from another connection is refused. At most kMaxConnectionsPerPeer TCP connections from one
// address. Framing: one JSON object per line ('\n'-terminated, UTF-8),
// at most kMaxFrameBytes including the newline; a longer frame closes the connection.
// Every frame carries "v" (kProtocolVersion) and "type". The first frame on a connection must be:
//   {"v":1,"type":"hello","rank":R,"pid":P,"token":"..."}
// sent within kHelloTimeoutMs of connecting. The supervisor checks the token, and that the connecting
// process (SO_PEERCRED) is the rank it claims to be (or one of that rank's descendants). A wrong token,
// a wrong version, a pid that is not the rank's, or a malformed frame closes that connection; nothing it
// sent is used. At most kMaxConnections connections are open at once.
// Then, from rank 0 only:
//   {"type":"step","step":S,"epoch":E,"loss":L,"lr":X,"samples_per_sec":T,"wall_time":W}
//   {"type":"eval","epoch":E,"step":S,"val_loss":L,"val_accuracy":A}
//   {"type":"checkpoint","step":S,"path":"..."}
//   {"type":"status","status":"running|stopping|completed|stopped|failed","message":"...","total_steps":N,
//    "steps_per_epoch":N,"resumed_from_step":S}
//   ("running" may carry a "message" worth showing the user, e.g. that a damaged checkpoint was skipped)
//   {"type":"scalars","step":S,"values":{"name":x,...}}
//   (any named scalars of step S, e.g. from a user's script through python/ringmaster: S a non-negative
//    integer, each x a finite number, each name 1 to kMaxScalarNameLength characters without control
//    characters, at most kMaxScalarsPerFrame values; the supervisor drops values that break these rules
//    and a frame without a valid step, and records the rest in RUN_DIR/scalars.csv)
// and from every rank, every kHeartbeatIntervalMs from a timer while the process is alive and making
// progress (also during a long step, a checkpoint or evaluation):
//   {"type":"heartbeat","step":S,"phase":"loading|rendezvous|train|eval|checkpoint|done",
//    "timing":{"steps":N,"data_ms":x,"compute_ms":x,"sync_ms":x,"optimizer_ms":x},
//    "usage":{"cpu_percent":x,"rss_mib":x,"threads":n,"disk_read_mib_s":x,"disk_write_mib_s":x}}
//   ("timing", present when training steps were timed since the previous heartbeat: the mean milliseconds a
//    step of this rank spent loading its batch, computing forward and backward without the waits on gradient
//    buckets, waiting for the other ranks, and in the optimizer, over the N steps timed; core/trainer/
//    step_timing.h says how. The supervisor names a straggler from them.)
//   ("usage", at most every kUsageIntervalMs: what the rank's own process uses, from its /proc/self, under the
//    names of system.csv (run_layout.h's system_metric::kProcessMetrics); the rates need two readings, so the
//    first carries only rss_mib and threads. A Slurm run records them in system.csv: the launcher cannot read
//    the /proc of another node. A local run samples the ranks' process trees itself and ignores them.)

#include "protocol/run_layout.h"

namespace ringmaster::protocol {

inline constexpr int kProtocolVersion = 1;
inline constexpr int kMaxFrameBytes = 64 * 1024;
inline constexpr int kHeartbeatIntervalMs = 1000;
inline constexpr int kUsageIntervalMs = 2000; // as the launcher's own sampler (system_sampler.h)
inline constexpr int kHelloTimeoutMs = 5000;
inline constexpr int kMaxConnections = 1024;
inline constexpr int kMaxConnectionsPerPeer = 64;
inline constexpr const char* kSocketEnv = "RINGMASTER_SOCKET";
inline constexpr const char* kTokenEnv = "RINGMASTER_TOKEN";
inline constexpr const char* kEndpointEnv = "RINGMASTER_ENDPOINT";
inline constexpr int kMaxScalarsPerFrame = 256;
inline constexpr int kMaxScalarNameLength = 128;

// Frame types.
inline constexpr const char* kTypeHello = "hello";
inline constexpr const char* kTypeStep = "step";
inline constexpr const char* kTypeEval = "eval";
inline constexpr const char* kTypeCheckpoint = "checkpoint";
inline constexpr const char* kTypeStatus = "status";
inline constexpr const char* kTypeHeartbeat = "heartbeat";
inline constexpr const char* kTypeScalars = "scalars";
inline constexpr const char* kTypeChallenge = "challenge";

// Keys.
inline constexpr const char* kKeyVersion = "v";
inline constexpr const char* kKeyType = "type";
inline constexpr const char* kKeyRank = column::kRank;
inline constexpr const char* kKeyPid = "pid";
// The hello's node: SLURMD_NODENAME under Slurm, else the host name. Optional; where a hung rank's stacks are
// taken (srun onto that node). Not covered by the hello's MAC: the supervisor only accepts a plain node name.
inline constexpr const char* kKeyHost = "host";
inline constexpr const char* kKeyToken = "token";
inline constexpr const char* kKeyNonce = "nonce";
inline constexpr const char* kKeyMac = "mac";
// A step's and an evaluation's values: named as the CSV columns they become (run_layout.h).
inline constexpr const char* kKeyStep = column::kStep;
inline constexpr const char* kKeyEpoch = column::kEpoch;
inline constexpr const char* kKeyLoss = column::kLoss;
inline constexpr const char* kKeyLr = column::kLr;
inline constexpr const char* kKeySamplesPerSec = column::kSamplesPerSec;
inline constexpr const char* kKeyWallTime = column::kWallTime;
inline constexpr const char* kKeyValLoss = column::kValLoss;
inline constexpr const char* kKeyValAccuracy = column::kValAccuracy;
inline constexpr const char* kKeyPath = "path";
inline constexpr const char* kKeyStatus = "status";
inline constexpr const char* kKeyMessage = "message";
inline constexpr const char* kKeyTotalSteps = "total_steps";
inline constexpr const char* kKeyStepsPerEpoch = "steps_per_epoch";
inline constexpr const char* kKeyResumedFromStep = "resumed_from_step";
inline constexpr const char* kKeyPhase = "phase";
inline constexpr const char* kKeyValues = "values";
inline constexpr const char* kKeyTiming = "timing";
inline constexpr const char* kKeyTimingSteps = "steps";
inline constexpr const char* kKeyDataMs = "data_ms";
inline constexpr const char* kKeyComputeMs = "compute_ms";
inline constexpr const char* kKeySyncMs = "sync_ms";
inline constexpr const char* kKeyOptimizerMs = "optimizer_ms";
inline constexpr const char* kKeyUsage = "usage";

// Status values.
inline constexpr const char* kStatusRunning = "running";
inline constexpr const char* kStatusStopping = "stopping";
inline constexpr const char* kStatusCompleted = "completed";
inline constexpr const char* kStatusStopped = "stopped";
inline constexpr const char* kStatusFailed = "failed";

} // namespace ringmaster::protocol
