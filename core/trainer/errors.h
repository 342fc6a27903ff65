#pragma once
// Error types that decide the trainer's exit code: bad input is 2 (the user can fix it by changing
// a flag or a file), everything else that stops a run is 1.

#include <stdexcept>
#include <string>

namespace ringmaster::trainer {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// A problem with the flags, the job file, the environment contract or an input file.
class UsageError : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace ringmaster::trainer
