#include "supervisor/failure_verdict.h"

#include <QRegularExpression>

#include <csignal>

#include "protocol/exit_codes.h"
#include "supervisor/rank_process.h"

namespace ringmaster::supervisor {
namespace {

constexpr qint64 kKiBPerMiB = 1024;
constexpr int kPythonExitUsage = 2; // argparse's parser.error(), `python3 missing.py`

} // namespace

QString describeEnd(const RankEnd& end)
{
    if (end.exitSignal == 0) {
        QString how = QStringLiteral("exited with code %1").arg(end.exitCode);
        if (!end.trainerExitCodes) {
            if (end.exitCode == kPythonExitUsage) how += QStringLiteral(" (Python's code for a command-line error, e.g. argparse's: see its log)");
            return how;
        }
        if (end.exitCode == protocol::kTrainerExitUsage) how += QStringLiteral(" (bad input)");
        if (end.exitCode == protocol::kTrainerExitAddressInUse) how += QStringLiteral(" (rendezvous port already in use)");
        return how;
    }
    const QString signal = QStringLiteral("signal %1 (%2)").arg(end.exitSignal).arg(signalName(end.exitSignal));
    const QString peak = end.peakRssKiB > 0 ? QStringLiteral("peak memory %1 MiB").arg((end.peakRssKiB + kKiBPerMiB / 2) / kKiBPerMiB)
                                            : QStringLiteral("peak memory unknown");
    if (end.oomKilled) return QStringLiteral("killed by the out-of-memory killer (%1): reduce the batch size or the number of ranks").arg(peak);
    if (end.oomLikely) {
        return QStringLiteral("killed by %1 while the out-of-memory killer was active in its memory cgroup (%2): "
                              "probably out of memory; reduce the batch size or the number of ranks").arg(signal, peak);
    }
    if (end.signalSentByRingmaster) return QStringLiteral("killed by %1").arg(signal);
    switch (end.exitSignal) {
    case SIGABRT: return QStringLiteral("aborted (%1): see its log for the error").arg(signal);
    case SIGSEGV: case SIGBUS: case SIGFPE: case SIGILL: case SIGTRAP: case SIGSYS:
        return QStringLiteral("crashed (%1): see its log").arg(signal);
    default:
        return QStringLiteral("killed by %1, which Ringmaster did not send: another process, a user or the kernel killed it (%2)")
            .arg(signal, peak);
    }
}

FailurePriority priorityOf(const RankEnd& end, const QStringList& lastLines)
{
    if (end.exitSignal) return FailurePriority::Signalled;
    if (end.exitCode == protocol::kTrainerExitFailure) {
        // The trainer says "a peer rank died"; a script's Gloo group says its connection to the peer closed.
        static const QRegularExpression peerDied(
            QStringLiteral("a peer rank died|Connection closed by peer|Connection reset by peer"));
        const QString tail = lastLines.mid(std::max<qsizetype>(0, lastLines.size() - 3)).join(QLatin1Char('\n'));
        return peerDied.match(tail).hasMatch() ? FailurePriority::PeerCollateral : FailurePriority::ExitOne;
    }
    return FailurePriority::OtherExit;
}

QStringList reportableLines(const QStringList& lines, int count)
{
    static const QRegularExpression noise(
        QStringLiteral("^\\s*(frame #\\d+:|terminate called after throwing|Exception raised from |what\\(\\):\\s*$)"));
    static const QRegularExpression pythonFrame(QStringLiteral("^\\s+File \"[^\"]*\", line \\d+"));
    const QString tracebackHeader = QStringLiteral("Traceback (most recent call last):");
    QStringList kept;
    qsizetype exceptionLine = -1; // the last Python traceback's "SomeError: message" in `kept`
    for (qsizetype i = 0; i < lines.size(); ++i) {
        const QString& line = lines.at(i);
        if (noise.match(line).hasMatch()) continue;
        if (line.trimmed() != tracebackHeader) {
            kept.append(line);
            continue;
        }
        // A Python traceback: its header, its innermost frame (the "File …" line and the source lines
        // under it) and the exception line; the outer frames stay in the log, as C++ frames do.
        kept.append(line);
        qsizetype end = i + 1;
        qsizetype innermost = -1;
        for (; end < lines.size() && (lines.at(end).startsWith(QLatin1Char(' ')) || lines.at(end).startsWith(QLatin1Char('\t'))); ++end) {
            if (pythonFrame.match(lines.at(end)).hasMatch()) innermost = end;
        }
        for (qsizetype j = innermost < 0 ? i + 1 : innermost; j < end; ++j) kept.append(lines.at(j));
        if (end < lines.size()) {
            exceptionLine = kept.size();
            kept.append(lines.at(end));
        }
        i = end;
    }
    QStringList tail = kept.mid(std::max<qsizetype>(0, kept.size() - count));
    // Lines printed after the traceback (a peer's farewell, a warning at exit) must not push the error out.
    if (exceptionLine >= 0 && exceptionLine < kept.size() - count && count > 0) {
        tail = QStringList{kept.at(exceptionLine)} + kept.mid(kept.size() - (count - 1));
    }
    return tail;
}

void FailureVerdict::reset()
{
    m_cause = {};
    m_priority = -1;
}

bool FailureVerdict::consider(int rank, const QString& reason, FailurePriority priority, const RankEnd& end,
                              const QStringList& lastLines)
{
    if (static_cast<int>(priority) <= m_priority) return false;
    m_priority = static_cast<int>(priority);
    m_cause.rank = rank;
    m_cause.reason = reason;
    m_cause.exitCode = end.exitCode;
    m_cause.exitSignal = end.exitSignal;
    m_cause.lastLines = lastLines;
    return true;
}

void FailureVerdict::setRootCause(const RootCause& cause)
{
    m_cause = cause;
    m_priority = static_cast<int>(FailurePriority::Hung) + 1;
}

} // namespace ringmaster::supervisor
