#pragma once
// A short check program run by pre-flight and by the trainer's description (the trainer's --validate-only
// and --version, a Python importing torch): its exit status and output, or why it gave none, bounded in time
// and cancellable from another thread. A check is not a rank: the torchrun and socket variables are removed.

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

#include <atomic>

namespace ringmaster::supervisor {

struct CheckRun
{
    QString failure;          // "cancelled", "did not answer in N s", "cannot run …", "was interrupted …"
    int exitCode = 0;
    QString standardOutput;
    QString standardError;
};

// Runs `program arguments`, polling `cancelled` (may be null) every 0.1 s; killed after timeoutMs. `what`
// names the check in the failure ("ringmaster-trainer --validate-only did not answer in 60 s").
CheckRun runCheck(const QString& program, const QStringList& arguments, const QString& what, int timeoutMs,
                  const std::atomic_bool* cancelled, const QProcessEnvironment& extra = {});

} // namespace ringmaster::supervisor
