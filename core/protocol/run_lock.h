#pragma once
// The run directory's supervisor lock, RUN_DIR/supervisor.lock: the launcher or app running a job on this
// machine holds a write lock on it (an open-file-description lock, fcntl F_OFD_SETLK) for as long as it runs
// the job. The kernel drops the lock when that process ends in any way, SIGKILL included, which lets
//   - a reader (ringmaster-runs, the Runs tab) tell a run being run now ("running") from one whose supervisor
//     died before writing a final status ("interrupted"), by asking (F_OFD_GETLK) without taking the lock;
//   - a second launcher refuse to resume a run directory that is still being run.
// The file's text (pid and host of the holder) is for messages only: the lock is the truth. Plain C++ and
// POSIX (no Qt, no LibTorch): the supervisor takes the lock, the runs library asks about it.

#include <string>

namespace ringmaster::protocol {

inline constexpr const char* kRunLockFile = "supervisor.lock";

class RunLock
{
public:
    enum class Result { Taken, HeldElsewhere, Failed };

    RunLock() = default;
    ~RunLock() { release(); }
    RunLock(const RunLock&) = delete;
    RunLock& operator=(const RunLock&) = delete;

    // Takes the lock of run directory DIR, creating the file, and records "pid N on HOST" in it.
    // HeldElsewhere: another process holds it (*detail: what it recorded); Failed: *detail says why.
    Result acquire(const std::string& dir, std::string* detail);
    void release();
    bool held() const { return m_fd >= 0; }

private:
    int m_fd = -1;
};

enum class RunLockState { NoLockFile, Held, Free };

// Whether someone holds DIR's supervisor lock now (*holder, when given and held: what it recorded, e.g.
// "pid 4242 on gpu-box"). The file is opened read-only and never locked here.
RunLockState probeRunLock(const std::string& dir, std::string* holder = nullptr);

} // namespace ringmaster::protocol
