#include "supervisor/slurm/slurm_client.h"

#include <QDir>
#include <QFileInfo>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>

#include <algorithm>

#include "supervisor/report_frame.h"

namespace ringmaster::supervisor {
namespace {

constexpr int kStartTimeoutMs = 10000;
constexpr int kKillWaitMs = 2000;
constexpr int kMillisecondsPerSecond = 1000;
constexpr char kFieldSeparator = '|';

// A tool's stderr as one line: its lines joined, without the "sbatch: error: " prefixes.
QString oneLine(const QString& program, const QString& text)
{
    const QString tool = QFileInfo(program).fileName();
    QStringList lines;
    const QStringList prefixes{tool + QStringLiteral(": error: "), tool + QStringLiteral(": "), QStringLiteral("error: ")};
    for (QString line : text.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        line = line.trimmed();
        for (const QString& prefix : prefixes) {
            if (line.startsWith(prefix)) {
                line = line.mid(prefix.size());
                break;
            }
        }
        if (!line.isEmpty() && !lines.contains(line)) lines.append(line);
    }
    return lines.join(QStringLiteral("; "));
}

// A job id as sbatch prints it ("12345", or "12345_7" for an array task). Anything else is refused
// before it reaches a tool: `scontrol show job ""` would describe every job.
bool isJobId(const QString& jobId)
{
    static const QRegularExpression id(QStringLiteral("^\\d+(_\\d+)?$"));
    return id.match(jobId).hasMatch();
}

QString notAJobId(const QString& jobId)
{
    return QStringLiteral("\"%1\" is not a Slurm job id (digits, as sbatch printed it)").arg(jobId);
}

bool saysInvalidJob(const QString& error)
{
    return error.contains(QLatin1String("Invalid job id"), Qt::CaseInsensitive);
}

// "CODE:SIGNAL" as Slurm prints exit codes.
void parseExitCode(const QString& text, SlurmJobStatus& status)
{
    static const QRegularExpression exit(QStringLiteral("^(\\d+):(\\d+)$"));
    if (const auto m = exit.match(text.trimmed()); m.hasMatch()) {
        status.exitCode = m.captured(1).toInt();
        status.exitSignal = m.captured(2).toInt();
    }
}

int gpusInGres(const QString& gres)
{
    // "gpu:a100:4(S:0-1),gpu:v100:2" -> 6; "gpu:4" -> 4.
    static const QRegularExpression gpu(QStringLiteral("(?:^|,)gpu(?::[^:,(]+)?:(\\d+)"));
    int total = 0;
    auto it = gpu.globalMatch(gres);
    while (it.hasNext()) total += it.next().captured(1).toInt();
    return total;
}

} // namespace

SlurmCommands SlurmCommands::inFolder(const QString& folder)
{
    const QDir dir(folder);
    SlurmCommands commands;
    commands.sbatch = dir.filePath(QStringLiteral("sbatch"));
    commands.squeue = dir.filePath(QStringLiteral("squeue"));
    commands.scontrol = dir.filePath(QStringLiteral("scontrol"));
    commands.scancel = dir.filePath(QStringLiteral("scancel"));
    commands.sinfo = dir.filePath(QStringLiteral("sinfo"));
    commands.sacct = dir.filePath(QStringLiteral("sacct"));
    commands.srun = dir.filePath(QStringLiteral("srun"));
    return commands;
}

bool SlurmJobStatus::isFinal() const
{
    switch (state) {
    case SlurmJobState::Completed:
    case SlurmJobState::Failed:
    case SlurmJobState::Cancelled:
    case SlurmJobState::Timeout:
    case SlurmJobState::NodeFail:
    case SlurmJobState::OutOfMemory:
    case SlurmJobState::Gone:
        return true;
    default:
        return false;
    }
}

SlurmClient::SlurmClient(SlurmCommands commands) : m_commands(std::move(commands)) {}

SlurmClient::Result SlurmClient::run(const QString& program, const QStringList& arguments, const QProcessEnvironment& environment) const
{
    Result result;
    const QString tool = QFileInfo(program).fileName();
    QProcess process;
    if (!environment.isEmpty()) process.setProcessEnvironment(environment);
    process.start(program, arguments);
    if (!process.waitForStarted(kStartTimeoutMs)) {
        result.error = QStringLiteral("%1 could not be started (%2): is Slurm installed and on PATH?")
                           .arg(program, process.errorString());
        return result;
    }
    process.closeWriteChannel();
    if (!process.waitForFinished(m_commands.timeoutMs)) {
        process.kill();
        process.waitForFinished(kKillWaitMs);
        result.error = QStringLiteral("%1 did not answer within %2 s: is slurmctld reachable (scontrol ping)?")
                           .arg(tool, QString::number(m_commands.timeoutMs / double(kMillisecondsPerSecond)));
        return result;
    }
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    const QString err = oneLine(program, QString::fromUtf8(process.readAllStandardError()));
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    if (process.exitStatus() != QProcess::NormalExit) {
        result.error = QStringLiteral("%1 crashed%2").arg(tool, err.isEmpty() ? QString() : QStringLiteral(": ") + err);
    } else if (result.exitCode != 0) {
        result.error = err.isEmpty() ? QStringLiteral("%1 exited with code %2").arg(tool).arg(result.exitCode) : err;
    }
    return result;
}

SlurmSubmission SlurmClient::submit(const QString& scriptPath, const QProcessEnvironment& environment) const
{
    SlurmSubmission submission;
    const Result result = run(m_commands.sbatch, {QStringLiteral("--parsable"), scriptPath}, environment);
    if (!result.error.isEmpty()) {
        submission.error = QStringLiteral("sbatch failed: %1").arg(result.error);
        return submission;
    }
    // --parsable prints "JOBID" or "JOBID;CLUSTER" (warnings, if any, go to stderr).
    static const QRegularExpression parsable(QStringLiteral("^(\\d+)(?:;(\\S+))?$"));
    const QString line = result.out.trimmed().split(QLatin1Char('\n')).constLast().trimmed();
    const auto m = parsable.match(line);
    if (!m.hasMatch()) {
        submission.error = QStringLiteral("sbatch printed no job id (got \"%1\")").arg(result.out.trimmed());
        return submission;
    }
    submission.jobId = m.captured(1);
    submission.cluster = m.captured(2);
    return submission;
}

SlurmJobState SlurmClient::stateFromText(const QString& text)
{
    // sacct writes "CANCELLED by 1000" and may append '+'; squeue and scontrol write the word alone.
    QString word = text.trimmed().section(QLatin1Char(' '), 0, 0).toUpper();
    while (word.endsWith(QLatin1Char('+'))) word.chop(1);
    static const QMap<QString, SlurmJobState> states{
        {QStringLiteral("PENDING"), SlurmJobState::Pending},
        {QStringLiteral("RUNNING"), SlurmJobState::Running},
        {QStringLiteral("COMPLETING"), SlurmJobState::Completing},
        {QStringLiteral("COMPLETED"), SlurmJobState::Completed},
        {QStringLiteral("FAILED"), SlurmJobState::Failed},
        {QStringLiteral("CANCELLED"), SlurmJobState::Cancelled},
        {QStringLiteral("TIMEOUT"), SlurmJobState::Timeout},
        {QStringLiteral("NODE_FAIL"), SlurmJobState::NodeFail},
        {QStringLiteral("OUT_OF_MEMORY"), SlurmJobState::OutOfMemory},
    };
    return states.value(word, SlurmJobState::Other);
}

SlurmJobStatus SlurmClient::parseScontrolJob(const QString& output)
{
    SlurmJobStatus status;
    auto field = [&output](const char* name) {
        const QRegularExpression re(QStringLiteral("(?:^|\\s)%1=(\\S*)").arg(QLatin1String(name)));
        const auto m = re.match(output);
        return m.hasMatch() ? m.captured(1) : QString();
    };
    status.stateText = field("JobState");
    if (status.stateText.isEmpty()) {
        status.error = QStringLiteral("scontrol show job printed no JobState (got \"%1\")").arg(output.left(200).trimmed());
        return status;
    }
    status.state = stateFromText(status.stateText);
    status.reason = field("Reason");
    if (status.isFinal()) parseExitCode(field("ExitCode"), status);
    return status;
}

SlurmJobStatus SlurmClient::state(const QString& jobId) const
{
    SlurmJobStatus status;
    if (!isJobId(jobId)) {
        status.error = notAJobId(jobId);
        return status;
    }
    // The queue first: it lists pending, running and completing jobs.
    const Result queue = run(m_commands.squeue, {QStringLiteral("-h"), QStringLiteral("-j"), jobId, QStringLiteral("-o"),
                                                 QStringLiteral("%T|%r")});
    const QString listed = queue.out.trimmed().section(QLatin1Char('\n'), 0, 0);
    if (queue.error.isEmpty() && !listed.isEmpty()) {
        status.stateText = listed.section(QLatin1Char(kFieldSeparator), 0, 0);
        status.reason = listed.section(QLatin1Char(kFieldSeparator), 1);
        status.state = stateFromText(status.stateText);
        if (!status.isFinal()) return status; // squeue lists a finished job for a moment: scontrol has its exit code
    } else if (!queue.error.isEmpty() && !saysInvalidJob(queue.error)) {
        status.error = QStringLiteral("squeue: %1").arg(queue.error);
        return status;
    }
    // A finished job: slurmctld keeps its record for MinJobAge (300 s by default).
    const Result control = run(m_commands.scontrol, {QStringLiteral("show"), QStringLiteral("job"), jobId});
    if (control.error.isEmpty()) return parseScontrolJob(control.out);
    if (!saysInvalidJob(control.error)) {
        status = {};
        status.error = QStringLiteral("scontrol: %1").arg(control.error);
        return status;
    }
    // Older still: only accounting remembers it, where the cluster keeps accounting.
    status = {};
    status.state = SlurmJobState::Gone;
    if (m_commands.sacct.isEmpty()) return status;
    const Result accounting = run(m_commands.sacct, {QStringLiteral("-n"), QStringLiteral("-X"), QStringLiteral("-P"),
                                                     QStringLiteral("-j"), jobId, QStringLiteral("-o"),
                                                     QStringLiteral("State,ExitCode,Reason")});
    const QString row = accounting.out.trimmed().section(QLatin1Char('\n'), 0, 0);
    if (!accounting.error.isEmpty() || row.isEmpty()) return status; // no accounting, or it does not know the job
    status.stateText = row.section(QLatin1Char(kFieldSeparator), 0, 0);
    status.state = stateFromText(status.stateText);
    status.reason = row.section(QLatin1Char(kFieldSeparator), 2, 2);
    if (status.isFinal()) parseExitCode(row.section(QLatin1Char(kFieldSeparator), 1, 1), status);
    return status;
}

QString SlurmClient::stop(const QString& jobId) const
{
    if (!isJobId(jobId)) return notAJobId(jobId);
    const Result result = run(m_commands.scancel, {QStringLiteral("--signal=TERM"), jobId});
    return result.error.isEmpty() ? QString() : QStringLiteral("scancel --signal=TERM %1 failed: %2").arg(jobId, result.error);
}

QString SlurmClient::kill(const QString& jobId) const
{
    if (!isJobId(jobId)) return notAJobId(jobId);
    const Result result = run(m_commands.scancel, {jobId});
    return result.error.isEmpty() ? QString() : QStringLiteral("scancel %1 failed: %2").arg(jobId, result.error);
}

QStringList SlurmClient::commandOnNode(const QString& jobId, const QString& node) const
{
    if (!isJobId(jobId) || !isPlainNodeName(node)) return {};
    // --overlap: the job's step holds every CPU it was given, and this step must run beside it, not wait for it.
    return {m_commands.srun, QStringLiteral("--jobid=") + jobId, QStringLiteral("--overlap"), QStringLiteral("--nodes=1"),
            QStringLiteral("--ntasks=1"), QStringLiteral("--nodelist=") + node, QStringLiteral("--quiet")};
}

SlurmPartitions SlurmClient::parsePartitions(const QString& output)
{
    SlurmPartitions result;
    QMap<QString, int> index;
    for (const QString& raw : output.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QStringList f = raw.trimmed().split(QLatin1Char(kFieldSeparator));
        const QStringList counts = f.value(3).split(QLatin1Char('/')); // allocated/idle/other/total
        if (f.size() < 5 || counts.size() != 4) {
            result.error = QStringLiteral("sinfo printed an unexpected line \"%1\" (expected PARTITION|AVAIL|TIMELIMIT|A/I/O/T|GRES)")
                               .arg(raw.trimmed());
            return result;
        }
        QString name = f.at(0);
        const bool isDefault = name.endsWith(QLatin1Char('*'));
        if (isDefault) name.chop(1);
        const QString gres = f.at(4) == QLatin1String("(null)") ? QString() : f.at(4);
        // sinfo writes one line per group of nodes that differ in a printed field: merge them.
        if (!index.contains(name)) {
            index.insert(name, static_cast<int>(result.partitions.size()));
            SlurmPartition partition;
            partition.name = name;
            partition.isDefault = isDefault;
            partition.available = f.at(1) == QLatin1String("up");
            partition.timeLimit = f.at(2);
            result.partitions.append(partition);
        }
        SlurmPartition& partition = result.partitions[index.value(name)];
        partition.nodesIdle += counts.at(1).toInt();
        partition.nodesTotal += counts.at(3).toInt();
        if (!gres.isEmpty() && !partition.gres.split(QLatin1Char(',')).contains(gres)) {
            partition.gres = partition.gres.isEmpty() ? gres : partition.gres + QLatin1Char(',') + gres;
        }
        partition.gpusPerNode = std::max(partition.gpusPerNode, gpusInGres(gres));
    }
    return result;
}

SlurmPartitions SlurmClient::partitions() const
{
    const Result result = run(m_commands.sinfo, {QStringLiteral("-h"), QStringLiteral("-o"), QStringLiteral("%P|%a|%l|%F|%G")});
    if (!result.error.isEmpty()) {
        SlurmPartitions failed;
        failed.error = QStringLiteral("sinfo: %1").arg(result.error);
        return failed;
    }
    SlurmPartitions listed = parsePartitions(result.out);
    if (!listed.error.isEmpty()) return listed;
    // Width 0: each field unpadded and uncut, '|' after each but the last.
    const Result nodes = run(m_commands.sinfo, {QStringLiteral("-h"), QStringLiteral("-N"), QStringLiteral("-O"),
                                                QStringLiteral("PartitionName:0|,StateCompact:0|,Gres:0|,GresUsed:0")});
    if (nodes.error.isEmpty()) parseGpuUse(nodes.out, &listed);
    return listed;
}

bool SlurmClient::parseGpuUse(const QString& output, SlurmPartitions* listed)
{
    static const QRegularExpression stateFlags(QStringLiteral("[^a-z]+$"));
    QMap<QString, int> freeByPartition;
    for (const QString& raw : output.split(QLatin1Char('\n'), Qt::SkipEmptyParts)) {
        const QStringList f = raw.trimmed().split(QLatin1Char(kFieldSeparator));
        if (f.size() != 4) return false;
        QString name = f.at(0).trimmed();
        if (name.endsWith(QLatin1Char('*'))) name.chop(1);
        // "idle", "mix", "alloc", "drain", "down*", "idle~" (powered down), ...: the flags after the word go.
        const QString state = f.at(1).trimmed().toLower().remove(stateFlags);
        const int free = std::max(0, gpusInGres(f.at(2).trimmed()) - gpusInGres(f.at(3).trimmed()));
        const bool usable = state == QLatin1String("idle") || state == QLatin1String("mix") || state == QLatin1String("mixed");
        freeByPartition[name] += usable ? free : 0;
    }
    for (SlurmPartition& partition : listed->partitions) {
        if (freeByPartition.contains(partition.name)) partition.gpusFree = freeByPartition.value(partition.name);
    }
    return true;
}

QStringList SlurmClient::controllerHosts() const
{
    const Result result = run(m_commands.scontrol, {QStringLiteral("show"), QStringLiteral("config")});
    return result.error.isEmpty() ? parseControllerHosts(result.out) : QStringList();
}

QStringList SlurmClient::parseControllerHosts(const QString& scontrolConfig)
{
    static const QRegularExpression line(QStringLiteral("^\\s*SlurmctldHost\\[\\d+\\]\\s*=\\s*([^\\s(]+)(?:\\(([^)\\s]+)\\))?"),
                                         QRegularExpression::MultilineOption);
    QStringList hosts;
    for (auto it = line.globalMatch(scontrolConfig); it.hasNext();) {
        const auto match = it.next();
        hosts << (match.captured(2).isEmpty() ? match.captured(1) : match.captured(2));
    }
    return hosts;
}

} // namespace ringmaster::supervisor
