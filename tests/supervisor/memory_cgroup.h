#pragma once
// A memory cgroup for a test, with a limit, under the test's own cgroup (v1 or v2), removed again
// when the test ends. Creating one needs root and a writable cgroup tree: create() says why not.

#include <QString>

namespace ringmaster::supervisor::test {

class MemoryCgroup
{
public:
    ~MemoryCgroup();
    // Empty on success, else the reason to skip.
    QString create(qint64 limitBytes);
    bool add(qint64 pid);

private:
    QString m_path;
    QString m_parent;
};

} // namespace ringmaster::supervisor::test
