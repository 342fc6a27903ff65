#pragma once
// The job form's "Your script" fields: the user's own torchrun-style training script, its arguments,
// the interpreter, how its scalars are read (patterns for its output, the folder of its TensorBoard
// event files). What `ringmaster-launch --script PATH [--python I] [--metric-pattern R]...
// [--tensorboard-dir D] -- ARGS` takes, and the same job.json keys.
// The interpreter is checked as pre-flight checks it (it exists and can `import torch`), debounced and off
// the GUI thread (a cold import takes seconds); the torch version it reports is shown under the field.
// Only an active (shown) panel checks: a built-in trainer job never starts a Python interpreter.

#include <QFutureWatcher>
#include <QGroupBox>
#include <QTimer>

#include "supervisor/job_spec.h"
#include "supervisor/preflight.h"

class QLabel;
class QLineEdit;
class QPlainTextEdit;

namespace ringmaster::ui {

class ScriptFields : public QGroupBox
{
    Q_OBJECT

public:
    explicit ScriptFields(QWidget* parent = nullptr);

    // `fromFile`: a job file (maybe someone else's) named the interpreter; given as a path, it is not run (the
    // torch check) before Start, while the field still shows it.
    void setJob(const supervisor::JobSpec& job, bool fromFile = false);
    // Writes the script, its arguments, the interpreter (marked as the file's while it is the one a job file
    // named: pre-flight checks it against the user's choices), the patterns and the TensorBoard folder.
    void apply(supervisor::JobSpec* job) const;
    // The panel is in use: checks its interpreter (and re-checks when it changes); inactive: none.
    void setActive(bool active);

    // What is wrong now, one sentence each (the interpreter's check counts once it has answered).
    QStringList problems() const;
    // The interpreter check is waiting for its debounce or running.
    bool isChecking() const { return m_checkPending; }
    QString torchVersion() const { return m_checked.torchVersion; }

    QLineEdit* scriptEdit() const { return m_script; }
    QLineEdit* argumentsEdit() const { return m_arguments; }
    QLineEdit* pythonEdit() const { return m_python; }
    QPlainTextEdit* patternsEdit() const { return m_patterns; }
    QLineEdit* tensorboardEdit() const { return m_tensorboard; }
    QLabel* interpreterNote() const { return m_interpreterNote; }

Q_SIGNALS:
    // A field changed or the interpreter check answered.
    void changed();

private:
    QString m_heldPython; // a job file's interpreter path, checked at Start rather than now
    QString m_filePython; // a job file's interpreter (path or name): the job says so while the field shows it
    QStringList patterns() const;
    void scheduleCheck();
    void onChecked();
    void showCheck();

    QLineEdit* m_script;
    QLineEdit* m_arguments;
    QLineEdit* m_python;
    QLabel* m_interpreterNote;
    QPlainTextEdit* m_patterns;
    QLineEdit* m_tensorboard;

    bool m_active = false;
    QTimer m_checkDebounce;
    QFutureWatcher<supervisor::PreflightResult> m_checkWatcher;
    QString m_checkInFlight;               // the interpreter the running check is for
    QString m_checkedFor;                  // the interpreter m_checked belongs to
    supervisor::PreflightResult m_checked; // error, or interpreterPath and torchVersion
    bool m_checkPending = false;
};

} // namespace ringmaster::ui
