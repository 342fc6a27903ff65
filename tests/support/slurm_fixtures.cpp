#include "slurm_fixtures.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QThread>

namespace ringmaster::supervisor::slurmtest {

const QStringList kAwkwardArguments{
    QStringLiteral("plain"), QStringLiteral("with space"), QStringLiteral("it's"), QStringLiteral("double\"quote"),
    QStringLiteral("$HOME"), QStringLiteral("`id`"), QStringLiteral("$(echo hi)"), QStringLiteral("back\\slash"),
    QString(), QStringLiteral("--flag=a b"), QStringLiteral("new\nline"), QStringLiteral("*"),
    QStringLiteral("'; echo pwned; '"), QStringLiteral("ünïcödé")};

QString readAll(const QString& path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

QJsonObject readJson(const QString& path)
{
    return QJsonDocument::fromJson(readAll(path).toUtf8()).object();
}

Ran runProgram(const QString& program, const QStringList& arguments, int timeoutMs, const QProcessEnvironment& env)
{
    QProcess process;
    process.setProcessEnvironment(env);
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(program, arguments);
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        return {-1, QStringLiteral("timed out")};
    }
    return {process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1, QString::fromUtf8(process.readAll())};
}

bool pollUntil(const std::function<bool()>& condition, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (!condition()) {
        if (timer.elapsed() > timeoutMs) return false;
        QThread::msleep(kPollMs);
    }
    return true;
}

BatchScriptInput scriptInput(const QString& runDir, const QString& script, const QStringList& arguments)
{
    BatchScriptInput input;
    input.job.script = script;
    input.job.scriptArgs = arguments;
    input.job.nproc = 2;
    input.job.maxRestarts = 3;
    input.request.enabled = true;
    input.request.time = QStringLiteral("5");
    input.runDir = runDir;
    input.jobFile = runDir + QStringLiteral("/job.json");
    input.interpreterPath = QString::fromLatin1(kPython);
    input.scriptPath = script;
    input.helperDir = QStringLiteral("/opt/ringmaster helper");
    return input;
}

Stubs::Stubs()
{
    for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel", "sinfo", "sacct"}) {
        writeFile(m_dir.filePath(QLatin1String(tool)), kStub, true);
    }
}

void Stubs::answer(const char* tool, const QByteArray& out, const QByteArray& err, int rc)
{
    writeFile(m_dir.filePath(QLatin1String(tool) + QStringLiteral(".out")), out);
    writeFile(m_dir.filePath(QLatin1String(tool) + QStringLiteral(".err")), err);
    writeFile(m_dir.filePath(QLatin1String(tool) + QStringLiteral(".rc")), QByteArray::number(rc));
}

QString Stubs::args(const char* tool) const
{
    return readAll(m_dir.filePath(QLatin1String(tool) + QStringLiteral(".args")));
}

SlurmClient Stubs::client(int timeoutMs) const
{
    SlurmCommands commands = SlurmCommands::inFolder(m_dir.path());
    commands.timeoutMs = timeoutMs;
    return SlurmClient(commands);
}

bool localSlurm(QString* skipReason, const char* realEntry)
{
    static bool tried = false;
    static QString skip;
    if (!tried) {
        tried = true;
        if (qEnvironmentVariable("RINGMASTER_REAL_SLURM_TESTS") == QLatin1String("separate")) {
            skip = QStringLiteral("the real Slurm tests run as ctest %1 (label slurm)").arg(QLatin1String(realEntry));
        }
        for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel", "srun"}) {
            if (!skip.isEmpty()) break;
            if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty()) {
                skip = QStringLiteral("Slurm is not installed (%1 missing): scripts/setup.sh installs slurm-wlm and munge")
                           .arg(QLatin1String(tool));
                break;
            }
        }
        if (skip.isEmpty()) {
            QElapsedTimer timer;
            timer.start();
            const Ran started = runProgram(QStringLiteral(RINGMASTER_SOURCE_DIR "/scripts/slurm-local.sh"), {}, kSlurmStartTimeoutMs);
            if (started.exitCode == kExitCannotRunHere) skip = started.output.trimmed();
            else if (started.exitCode != 0) skip = QStringLiteral("FAIL: ") + started.output;
            qInfo("slurm-local.sh took %lld ms", static_cast<long long>(timer.elapsed()));
        }
    }
    *skipReason = skip;
    return skip.isEmpty();
}

JobGuard::~JobGuard()
{
    if (!jobId.isEmpty() && !client.state(jobId).isFinal()) client.kill(jobId);
}

QString queueLine(const QString& jobId)
{
    return runProgram(QStringLiteral("squeue"), {QStringLiteral("-h"), QStringLiteral("-j"), jobId, QStringLiteral("-o"), QStringLiteral("%i %T")})
        .output.trimmed();
}

bool waitFinal(const SlurmClient& client, const QString& jobId, SlurmJobStatus* status)
{
    return pollUntil([&] { return (*status = client.state(jobId)).isFinal(); }, kJobDeadlineMs);
}

} // namespace ringmaster::supervisor::slurmtest
