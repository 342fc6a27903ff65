#pragma once
// The user's own choice, in the app, of the programs a job runs (supervisor/trusted_programs.h). "Choose
// trainer…" in the Devices panel picks a ringmaster-trainer file, which is then the job's and remembered, so a
// later job file may name it. At Start, a script job whose interpreter a job file named, and which the user has
// not chosen before, is run only once the user confirms that interpreter (then remembered); declining starts
// nothing. Pre-flight refuses such an interpreter anyway: this question is the app's way of choosing it.

#include <QString>

class QWidget;

namespace ringmaster::supervisor {
struct JobSpec;
}

namespace ringmaster::ui {

// True when the job may start: not a script, its interpreter not from a job file, already trusted, or confirmed
// now (and remembered). The question's buttons are named "runWithInterpreter" and "doNotRun" for tests.
bool confirmFileInterpreter(QWidget* parent, const supervisor::JobSpec& job);

// A file dialog for a trainer binary; the chosen path (empty when cancelled).
QString askForTrainer(QWidget* parent);

} // namespace ringmaster::ui
