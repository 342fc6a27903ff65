#include "supervisor/program_checks.h"

#include "supervisor/job_spec.h"
#include "supervisor/trusted_programs.h"

#include <QFile>
#include <QFileInfo>

#include <sys/stat.h>
#include <unistd.h>

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

QString checkNotChangeableByOthers(const QString& key, const QString& path)
{
    const auto ours = [](uid_t owner) { return owner == ::geteuid() || owner == 0; };
    struct stat link {};
    struct stat folder {};
    const QByteArray file = QFile::encodeName(path);
    const QByteArray parent = QFile::encodeName(QFileInfo(path).absolutePath());
    const bool known = ::lstat(file.constData(), &link) == 0 && ::stat(parent.constData(), &folder) == 0;
    const bool othersWrite = (folder.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (folder.st_mode & S_ISVTX) == 0;
    if (known && (!S_ISLNK(link.st_mode) || ours(link.st_uid)) && ours(folder.st_uid) && !othersWrite) return {};
    return QStringLiteral("job file: \"%1\" %2 lies where another user could change what it names between the check and the "
                          "run: give --python with a path in your own folders")
        .arg(key, path);
}

} // namespace ringmaster::supervisor
