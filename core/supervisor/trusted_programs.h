#pragma once
// Which programs this user has chosen to run, so that a job file from someone else can name only those.
// A job file's "launch.trainer_path" is accepted when it is, by device and inode, the trainer this
// installation runs anyway (locateTrainer without a job file) or one the user chose before: with --trainer on
// the command line, or "Choose trainer…" in the app. Its "launch.python" when it is the interpreter a script
// runs under by default (python3 on the user's PATH) or one the user chose before (--python, the app's
// interpreter field, or a confirmation at Start in the app). Choices are remembered in the app's settings
// (app_settings.h), shared by the app and ringmaster-launch, as absolute paths; identity is checked again
// each time, so a remembered path replaced by another file still names the file now there, which the user
// owns. A name is never enough: a file called ringmaster-trainer in a download is not the user's trainer.

#include <QString>
#include <QStringList>

namespace ringmaster::supervisor {

// Whether two paths name the same file (links followed), by st_dev and st_ino; false when either is missing.
bool sameFile(const QString& a, const QString& b);

// The remembered choices, newest first (at most kMaxTrustedPrograms each).
inline constexpr int kMaxTrustedPrograms = 32;
QStringList rememberedTrainers();
QStringList rememberedInterpreters();
// Records a choice (its absolute, links-resolved path); nothing when the path does not exist.
void rememberTrainer(const QString& path);
void rememberInterpreter(const QString& path);

// The trainer this installation runs without a job file, or a remembered one.
bool isTrustedTrainer(const QString& path);
// The default interpreter (python3 on PATH), or a remembered one.
bool isTrustedInterpreter(const QString& path);

} // namespace ringmaster::supervisor
