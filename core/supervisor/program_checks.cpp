#include "program_checks.h"

#include "job_spec.h"

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

} // namespace

QString checkTrainerProgram(const JobSpec& job, const QString& resolvedPath)
{
    if (!job.trainerPathFromFile || job.trainerPath.isEmpty()) return {};
    const QLatin1String expected(kTrainerProgramName);
    if (QFileInfo(job.trainerPath).fileName() == expected && resolvedFileName(resolvedPath) == expected) return {};
    return QStringLiteral("job file: \"launch.trainer_path\" %1 is not %2 (it resolves to %3): a job file may name only the "
                          "trainer; to run another program as the trainer, give it on the command line with --trainer PATH")
        .arg(job.trainerPath, expected, resolved(resolvedPath));
}

QString checkInterpreterProgram(const QString& python, const QString& resolvedPath)
{
    if (namedLikePython(QFileInfo(python).fileName()) && namedLikePython(resolvedFileName(resolvedPath))) return {};
    return QStringLiteral("--python %1 (%2) is not a Python interpreter: a script runs only under a program named python… or "
                          "pypy…; give one with --python PATH (e.g. python3 or a virtualenv's bin/python)")
        .arg(python, resolved(resolvedPath));
}

} // namespace ringmaster::supervisor
