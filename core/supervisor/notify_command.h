#pragma once
// The launcher's --notify-command CMD: the user's own program (mail, a Slack webhook, a phone push) run once
// per run event (run_event.h) with the event as one line of JSON on its standard input. CMD is split into
// words as a shell would split them, but no shell runs it: no expansion, no redirection, no second command.
// It comes only from the command line (never from a job file someone else wrote). Events are handed over one
// at a time in order; each command gets kNotifyTimeoutMs, then SIGTERM, then SIGKILL after a short grace, so
// a stuck mailer never keeps the launcher from exiting. A command that fails is reported in one line; the
// run's outcome and exit code never depend on it.

#include <QByteArray>
#include <QElapsedTimer>
#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <optional>

class QProcess;
class QTimer;

namespace ringmaster::supervisor {

struct RunEvent;

inline constexpr int kNotifyTimeoutMs = 30000;

struct NotifyProgram
{
    QString program;   // resolved: an executable file's path
    QStringList arguments;
    QString text;      // as given, for messages
    bool isEmpty() const { return program.isEmpty(); }
};

// CMD's words as a POSIX shell splits them ('single', "double" with \" \\ \$ \`, a backslash outside quotes),
// with nothing expanded; nullopt when a quote is not closed or CMD ends in a lone backslash.
std::optional<QStringList> splitShellWords(const QString& text);

// Splits and resolves CMD (a bare name is looked up on PATH). On a problem returns an empty program with
// *error set to one line naming it and the fix.
NotifyProgram parseNotifyCommand(const QString& text, QString* error);

class NotifyCommand : public QObject
{
    Q_OBJECT

public:
    explicit NotifyCommand(NotifyProgram program, int timeoutMs = kNotifyTimeoutMs, QObject* parent = nullptr);
    ~NotifyCommand() override;

    void send(const RunEvent& event);
    // No command is running or waiting.
    bool idle() const;
    // Ends the running command now (SIGKILL) and drops the waiting ones.
    void abandon();

Q_SIGNALS:
    // One line: the command could not start, timed out, or exited non-zero (with its last output line).
    void problem(const QString& line);
    // The last waiting event was handed over (idle() is true again).
    void drained();

private:
    void startNext();
    void onEnded(bool started, int exitCode, bool crashed);
    void onTimeout();

    NotifyProgram m_program;
    int m_timeoutMs;
    QList<QPair<QString, QByteArray>> m_waiting; // (event name, JSON line)
    QString m_current;                           // the running command's event name
    QProcess* m_process = nullptr;
    QTimer* m_watchdog = nullptr;
    bool m_terminated = false;
    QByteArray m_output; // the running command's last kOutputKept bytes of output, for the problem line
};

} // namespace ringmaster::supervisor
