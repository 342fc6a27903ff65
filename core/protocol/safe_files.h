#pragma once
// Writing into a run directory without being led elsewhere, and without leaving half a file. A run folder
// may come from someone else (a bundle unpacked, a colleague's folder resumed): a symbolic link planted in it
// (summary.json -> ~/.bashrc, logs -> /etc) would turn the supervisor's or the trainer's writes into writes
// of that target. So a run directory holds no symbolic links (checked when a run starts or resumes in it),
// and every file is opened with O_NOFOLLOW. Whole files are written atomically (a temp file of this process,
// created exclusively, fsync, rename, then the folder fsync'ed so the rename survives a crash), and each
// failure says what failed and why in the system's words (a full disk surfaces at any of the steps).
// Plain POSIX and C++17 (no Qt, no LibTorch): the trainer and the supervisor share it.

#include <string>

namespace ringmaster::protocol {

// The first symbolic link found in DIR or below it (at most kSymlinkScanDepth folders deep, at most
// kSymlinkScanEntries entries looked at), as a path; "" when there is none. *complete (when given) is false
// when the budget ran out before the whole tree was seen.
inline constexpr int kSymlinkScanDepth = 3;
inline constexpr int kSymlinkScanEntries = 200000;
std::string findSymlink(const std::string& dir, bool* complete = nullptr);

// The one line that refuses a run directory holding a symbolic link, or too large to check ("" when fine).
std::string symlinkProblem(const std::string& dir);

// open(2) of a file inside a run directory: O_NOFOLLOW and O_CLOEXEC added. -1 with errno as open's.
int openInRunDirectory(const std::string& path, int flags, int mode = 0644);

// path := bytes, atomically (temp file PATH.tmp-PID-N opened O_EXCL|O_NOFOLLOW, fsync, rename, folder fsync).
// False with *error "write PATH: No space left on device" (the action and the system's reason); the temp
// file is removed and an earlier PATH is untouched.
bool writeFileAtomically(const std::string& path, const std::string& bytes, std::string* error);

// fsync of the folder holding PATH, so a rename into it is on disk. False with errno set.
bool syncFolderOf(const std::string& path);

} // namespace ringmaster::protocol
