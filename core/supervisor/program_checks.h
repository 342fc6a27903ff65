#pragma once
// Which programs a job may make the launcher run. A job file can come from someone else (a colleague, a
// repository, a download); opening and launching it must run only ringmaster-trainer or the user's script
// under a Python interpreter, never another program named in the file. Pre-flight calls these before it
// runs anything (it runs the trainer to validate flags and the interpreter to import torch), and launching
// never goes through a shell: programs and arguments go to QProcess (or, under Slurm, into a batch script
// with every word quoted, slurm/batch_script.h).

#include <QString>

namespace ringmaster::supervisor {

struct JobSpec;

inline constexpr char kTrainerProgramName[] = "ringmaster-trainer";

// Empty when fine. A trainer path that came from a job file ("launch.trainer_path") must be, by identity,
// the trainer this installation runs or one the user chose before (trusted_programs.h): a file named
// ringmaster-trainer in a download, or a link of that name to another program, is refused. --trainer PATH on
// the command line is the user's own choice and is not limited.
QString checkTrainerProgram(const JobSpec& job, const QString& resolvedPath);

// Empty when fine. The interpreter of a script must be a Python: its name, and the name of the file it
// resolves to, start with "python" or "pypy" (python3, python3.11, a virtualenv's python, pypy3).
QString checkInterpreterProgram(const QString& python, const QString& resolvedPath);

// Empty when fine. An interpreter that came from a job file ("launch.python") must be, by identity, the
// default one (python3 on PATH) or one the user chose before (trusted_programs.h). --python on the command
// line, or the app's field typed by the user, is the user's own choice.
QString checkInterpreterChoice(const JobSpec& job, const QString& resolvedPath);

// Empty when no other user can change what PATH names: PATH, if a link, belongs to this user or root, and so does
// its folder, which others cannot write (or only with the sticky bit, which keeps them from replacing the link).
QString checkNotChangeableByOthers(const QString& key, const QString& path);

} // namespace ringmaster::supervisor
