#include "supervisor/notify_command.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QProcess>
#include <QStandardPaths>
#include <QTimer>

#include "supervisor/run_event.h"

#include <csignal>

#include <sys/prctl.h>
#include <unistd.h>

namespace ringmaster::supervisor {
namespace {

constexpr int kTerminateGraceMs = 2000;
constexpr qsizetype kOutputKept = 4096; // of the command's output, for the problem line

QString lastLineOf(const QByteArray& output)
{
    const QStringList lines = QString::fromUtf8(output).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    return lines.isEmpty() ? QString() : lines.last().trimmed();
}

} // namespace

std::optional<QStringList> splitShellWords(const QString& text)
{
    QStringList words;
    QString word;
    bool inWord = false;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar c = text.at(i);
        if (c == QLatin1Char('\'')) { // literal up to the next single quote
            const qsizetype end = text.indexOf(QLatin1Char('\''), i + 1);
            if (end < 0) return std::nullopt;
            word += text.mid(i + 1, end - i - 1);
            i = end;
            inWord = true;
        } else if (c == QLatin1Char('"')) { // a backslash escapes only $ ` " \ and a newline here
            for (++i;; ++i) {
                if (i >= text.size()) return std::nullopt;
                const QChar d = text.at(i);
                if (d == QLatin1Char('"')) break;
                if (d == QLatin1Char('\\') && i + 1 < text.size() && QStringLiteral("$`\"\\\n").contains(text.at(i + 1))) {
                    if (text.at(++i) != QLatin1Char('\n')) word += text.at(i);
                } else {
                    word += d;
                }
            }
            inWord = true;
        } else if (c == QLatin1Char('\\')) {
            if (++i >= text.size()) return std::nullopt;
            if (text.at(i) != QLatin1Char('\n')) word += text.at(i);
            inWord = true;
        } else if (c == QLatin1Char(' ') || c == QLatin1Char('\t') || c == QLatin1Char('\n')) {
            if (inWord) words << word;
            word.clear();
            inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (inWord) words << word;
    return words;
}

NotifyProgram parseNotifyCommand(const QString& text, QString* error)
{
    const std::optional<QStringList> split = splitShellWords(text);
    if (!split) {
        *error = QStringLiteral("--notify-command %1: a quote is not closed (or it ends in a backslash)").arg(text);
        return {};
    }
    const QStringList& words = *split;
    if (words.isEmpty()) {
        *error = QStringLiteral("--notify-command: give a program, e.g. --notify-command 'notify-me --to ops'");
        return {};
    }
    const QString& name = words.first();
    const QString resolved = name.contains(QLatin1Char('/')) ? QFileInfo(name).absoluteFilePath() : QStandardPaths::findExecutable(name);
    const QFileInfo file(resolved);
    if (resolved.isEmpty() || !file.isFile() || !file.isExecutable()) {
        *error = name.contains(QLatin1Char('/'))
                     ? QStringLiteral("--notify-command: %1 is not an executable file (chmod +x it, or give another program)").arg(name)
                     : QStringLiteral("--notify-command: no program '%1' on PATH (give its path, or install it)").arg(name);
        return {};
    }
    return NotifyProgram{file.absoluteFilePath(), words.mid(1), text};
}

NotifyCommand::NotifyCommand(NotifyProgram program, int timeoutMs, QObject* parent)
    : QObject(parent)
    , m_program(std::move(program))
    , m_timeoutMs(timeoutMs)
    , m_watchdog(new QTimer(this))
{
    m_watchdog->setSingleShot(true);
    connect(m_watchdog, &QTimer::timeout, this, &NotifyCommand::onTimeout);
}

NotifyCommand::~NotifyCommand() { abandon(); }

void NotifyCommand::send(const RunEvent& event)
{
    if (m_program.isEmpty()) return;
    m_waiting.append({runEventKindName(event.kind), QJsonDocument(event.toJson()).toJson(QJsonDocument::Compact) + '\n'});
    if (!m_process) startNext();
}

bool NotifyCommand::idle() const { return !m_process && m_waiting.isEmpty(); }

void NotifyCommand::abandon()
{
    m_waiting.clear();
    m_watchdog->stop();
    if (!m_process) return;
    QProcess* process = m_process;
    m_process = nullptr;
    process->disconnect(this);
    process->kill();
    process->waitForFinished(kTerminateGraceMs);
    delete process;
}

void NotifyCommand::startNext()
{
    if (m_waiting.isEmpty()) {
        Q_EMIT drained();
        return;
    }
    const auto [name, line] = m_waiting.takeFirst();
    m_current = name;
    m_terminated = false;
    m_output.clear();
    m_process = new QProcess(this);
    m_process->setProgram(m_program.program);
    m_process->setArguments(m_program.arguments);
    m_process->setProcessChannelMode(QProcess::MergedChannels);
    // Its own process group, as the ranks have: the terminal's Ctrl-C reaches the launcher, which ends the
    // command itself (abandon()), instead of the command dying of it mid-send; and it dies with the launcher.
    m_process->setChildProcessModifier([] {
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    });
    // Connected before the start: a command that cannot start reports through errorOccurred only.
    connect(m_process, &QProcess::readyRead, this, [this] {
        m_output += m_process->readAll();
        if (m_output.size() > kOutputKept) m_output = m_output.right(kOutputKept);
    });
    connect(m_process, &QProcess::finished, this, [this](int exitCode, QProcess::ExitStatus status) {
        onEnded(true, exitCode, status == QProcess::CrashExit);
    });
    connect(m_process, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
        if (error == QProcess::FailedToStart) onEnded(false, -1, false);
    });
    m_watchdog->start(m_timeoutMs);
    QProcess* process = m_process;
    process->start();
    if (m_process != process) return; // it failed to start, was reported, and the next one is under way
    process->write(line);
    process->closeWriteChannel();
}

void NotifyCommand::onTimeout()
{
    if (!m_process) return;
    if (!m_terminated) {
        m_terminated = true;
        m_process->terminate();
        m_watchdog->start(kTerminateGraceMs);
    } else {
        m_process->kill();
    }
}

void NotifyCommand::onEnded(bool started, int exitCode, bool crashed)
{
    if (!m_process) return;
    m_watchdog->stop();
    const QString output = lastLineOf(m_output + m_process->readAll());
    const QString what = QStringLiteral("--notify-command %1 (the '%2' event)").arg(m_program.text, m_current);
    if (!started) {
        Q_EMIT problem(QStringLiteral("%1 could not start: %2").arg(what, m_process->errorString()));
    } else if (m_terminated) {
        Q_EMIT problem(QStringLiteral("%1 was still running after %2 s and was ended").arg(what).arg(m_timeoutMs / 1000));
    } else if (crashed || exitCode != 0) {
        // On a crash QProcess's exit code is the signal's number.
        Q_EMIT problem(QStringLiteral("%1 %2%3").arg(what, crashed ? QStringLiteral("was ended by signal %1").arg(exitCode) : QStringLiteral("exited with code %1").arg(exitCode),
                                                     output.isEmpty() ? QString() : QStringLiteral(": ") + output));
    }
    m_process->deleteLater();
    m_process = nullptr;
    startNext();
}

} // namespace ringmaster::supervisor
