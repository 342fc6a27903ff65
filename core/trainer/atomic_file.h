#pragma once
// A file that appears whole or not at all. Bytes go to PATH.tmp-PID in the same folder; commit()
// checks every write, the fsync, the close and the rename (a full disk can surface at any of them),
// then syncs the folder. Any failure throws IoError naming the final path and the system's reason,
// and a file that was not committed has its temp file removed, so a failed save leaves nothing behind
// and never touches an earlier file of the same name.

#include <cstddef>
#include <string>

namespace ringmaster::trainer {

class AtomicFile
{
public:
    // Creates the temp file; throws IoError.
    explicit AtomicFile(std::string path);
    ~AtomicFile(); // removes the temp file unless commit() succeeded
    AtomicFile(const AtomicFile&) = delete;
    AtomicFile& operator=(const AtomicFile&) = delete;

    // Appends; throws IoError.
    void write(const void* data, std::size_t size);
    // Appends, but only records a failure (commit() throws it): for writers called back from C code,
    // which must not see an exception. Later bytes are discarded once one write failed.
    void writeOrRecord(const void* data, std::size_t size);
    // fsync, close, rename over the final path, fsync the folder; throws IoError (the first recorded
    // write failure, if any).
    void commit();

    const std::string& path() const { return m_path; }
    static std::string tempPathFor(const std::string& path);

private:
    int tryWrite(const void* data, std::size_t size); // 0 or errno
    [[noreturn]] void fail(const char* action, int errnoValue);

    std::string m_path;
    std::string m_tempPath;
    int m_fd = -1;
    int m_recordedError = 0;
    bool m_committed = false;
};

// path := bytes, atomically.
void writeFileAtomically(const std::string& path, const std::string& bytes);
// The whole of path; throws IoError when it cannot be read (a file that cannot be read must never be taken
// for an empty one and rewritten as such).
std::string readFileWhole(const std::string& path);

} // namespace ringmaster::trainer
