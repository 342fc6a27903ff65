#pragma once
// Error types that decide the trainer's exit code. The codes themselves are the supervisor contract in
// core/protocol/exit_codes.h (defined once there): bad input is 2 (the user can fix it by changing a
// flag or a file), a rendezvous port taken by another process is 3 (a relaunch on another port helps),
// everything else that stops a run is 1 (a failed write, a failed collective, ...).

#include <stdexcept>
#include <string>

#include "protocol/exit_codes.h"

namespace ringmaster::trainer {

inline constexpr int kExitOk = protocol::kTrainerExitOk;
inline constexpr int kExitFailure = protocol::kTrainerExitFailure;
inline constexpr int kExitUsage = protocol::kTrainerExitUsage;
inline constexpr int kExitAddressInUse = protocol::kTrainerExitAddressInUse;

// A problem with the flags, the job file, the environment contract or an input file.
class UsageError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// Rank 0 could not bind MASTER_PORT because something else holds it.
class AddressInUseError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

// A file of the run could not be written (disk full, folder removed, ...): the message names the
// path and the system's reason (strerror), on one line.
class IoError : public std::runtime_error
{
public:
    IoError(const std::string& path, const std::string& action, int errnoValue);
};

// An exception's message fit for a one-line error: the first line only, and for c10::Error without
// the C++ stack frames LibTorch appends to what().
std::string oneLineMessage(const std::exception& error);

} // namespace ringmaster::trainer
