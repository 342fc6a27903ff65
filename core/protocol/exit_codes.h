#pragma once
// ringmaster-trainer's exit codes: the contract between a rank and whoever supervises it. Defined
// here (no Qt, no LibTorch) because the supervisor decides restarts and verdicts from them without
// ever linking the trainer.
//   0 completed or stopped on request; 1 failed (a failed collective, an I/O error, a crash we caught);
//   2 bad input (a flag, the job file, the environment contract or an input file: restarting cannot help);
//   3 the rendezvous address was already in use (another process took MASTER_PORT): not the user's
//     fault, a relaunch on another port will do.

namespace ringmaster::protocol {

inline constexpr int kTrainerExitOk = 0;
inline constexpr int kTrainerExitFailure = 1;
inline constexpr int kTrainerExitUsage = 2;
inline constexpr int kTrainerExitAddressInUse = 3;

} // namespace ringmaster::protocol
