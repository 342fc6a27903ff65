#include "program_checks.h"

#include "job_spec.h"
#include "trusted_programs.h"

#include <QFileInfo>

namespace ringmaster::supervisor {
namespace {

bool namedLikePython(const QString& fileName)
{
    return fileName.startsWith(QLatin1String("python")) || fileName.startsWith(QLatin1String("pypy"));
}

// The file a path finally names, links followed; the path itself when it does not exist (reported elsewhere).
QString resolved(const QString& path)
{
    const QString canonical = QFileInfo(path).canonicalFilePath();
    return canonical.isEmpty() ? path : canonical;
}

QString resolvedFileName(const QString& path)
{
    return QFileInfo(resolved(path)).fileName();
}

// "PATH", or "PATH (RESOLVED)" when links lead elsewhere.
QString described(const QString& path, const QString& resolvedPath)
{
    const QString target = resolved(resolvedPath);
    return target == path ? path : QStringLiteral("%1 (%2)").arg(path, target);
}

} // namespace

QString checkTrainerProgram(const JobSpec& job, const QString& resolvedPath)
{
    if (!job.trainerPathFromFile || job.trainerPath.isEmpty()) return {};
    if (isTrustedTrainer(resolvedPath)) return {};
    return QStringLiteral("job file: \"launch.trainer_path\" %1 is not the trainer this installation runs nor one you "
                          "have chosen: a job file may name only those; to run it as the trainer, give it on the command "
                          "line with --trainer %2, or choose it in the app (Devices: Choose trainer…); either is remembered")
        .arg(described(job.trainerPath, resolvedPath), job.trainerPath);
}

QString checkInterpreterChoice(const JobSpec& job, const QString& resolvedPath)
{
    if (!job.pythonFromFile || isTrustedInterpreter(resolvedPath)) return {};
    return QStringLiteral("job file: \"launch.python\" %1 is an interpreter you have not used with Ringmaster on this "
                          "machine: to run the script with it, give --python %2 on the command line, or confirm it when you "
                          "press Start in the app; either is remembered")
        .arg(described(job.python, resolvedPath), job.python);
}

QString checkInterpreterProgram(const QString& python, const QString& resolvedPath)
{
    if (namedLikePython(QFileInfo(python).fileName()) && namedLikePython(resolvedFileName(resolvedPath))) return {};
    return QStringLiteral("--python %1 (%2) is not a Python interpreter: a script runs only under a program named python… or "
                          "pypy…; give one with --python PATH (e.g. python3 or a virtualenv's bin/python)")
        .arg(python, resolved(resolvedPath));
}

} // namespace ringmaster::supervisor
