// The launcher's --notify-command (core/supervisor/notify_command.h) on its own, with small shell programs
// written here: CMD is split into words as a shell would but never run by one (quotes group, nothing
// expands, a ';' is a word); a program that is missing or not executable is refused in one line; events reach
// the program one at a time, in order, as one JSON line each; a program that fails is reported with its exit
// code and last output line and the next event still goes out; a program that ignores SIGTERM is ended
// after the timeout and its grace, and abandon() ends one at once.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "supervisor/notify_command.h"
#include "supervisor/run_event.h"
#include "test_support.h"

using namespace ringmaster::supervisor;
using namespace ringmaster::supervisor::test;

namespace {

constexpr int kWaitMs = 20000;

RunEvent eventNamed(RunEvent::Kind kind, const QString& runDir)
{
    RunEvent event;
    event.kind = kind;
    event.time = QDateTime::currentDateTimeUtc();
    event.runDir = runDir;
    event.title = QStringLiteral("run x %1").arg(runEventKindName(kind));
    event.message = QStringLiteral("message of %1").arg(runDir);
    return event;
}

QStringList linesOf(const QString& path)
{
    return readAll(path).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace

class TestNotifyCommand : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;

    QString script(const QString& name, const QByteArray& body)
    {
        return writeFile(m_dir.filePath(name), "#!/bin/sh\n" + body, true);
    }

private Q_SLOTS:
    void wordsAreSplitWithoutAShell()
    {
        const QString argv = m_dir.filePath(QStringLiteral("argv.txt"));
        const QString program = script(QStringLiteral("argv.sh"), "for a in \"$@\"; do printf '%s\\n' \"$a\" >> \"$ARGV_FILE\"; done\ncat > /dev/null\n");
        qputenv("ARGV_FILE", argv.toUtf8());
        QString error;
        const NotifyProgram parsed = parseNotifyCommand(program + QStringLiteral(" 'a b' \"c d\" $HOME ';' rm -rf x `id` > out"), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(parsed.program, program);
        NotifyCommand command(parsed);
        QSignalSpy drained(&command, &NotifyCommand::drained);
        command.send(eventNamed(RunEvent::Kind::Completed, QStringLiteral("/r")));
        QVERIFY(drained.wait(kWaitMs));
        QCOMPARE(linesOf(argv), (QStringList{QStringLiteral("a b"), QStringLiteral("c d"), QStringLiteral("$HOME"), QStringLiteral(";"),
                                             QStringLiteral("rm"), QStringLiteral("-rf"), QStringLiteral("x"), QStringLiteral("`id`"),
                                             QStringLiteral(">"), QStringLiteral("out")}));
        QVERIFY(!QFileInfo::exists(QStringLiteral("out")));
    }

    // The real reader of shell words is the shell: /bin/sh's `eval set -- CMD` gives the same words for
    // commands whose only expansions are escaped or quoted away.
    void splitMatchesTheShell_data()
    {
        QTest::addColumn<QString>("command");
        QTest::newRow("plain") << QStringLiteral("notify  --to ops\tnow");
        QTest::newRow("single quotes") << QStringLiteral("mail -s 'run done: $x' \"me\"@example.org");
        QTest::newRow("double quotes with escapes") << QStringLiteral("say \"a \\\"quoted\\\" \\$HOME \\` \\\\ \\n word\"");
        QTest::newRow("backslashes outside quotes") << QStringLiteral("a\\ b c\\'d \\\\e");
        QTest::newRow("adjacent parts") << QStringLiteral("x'y z'\"w\"v ''  \"\"");
        QTest::newRow("single quote keeps backslashes") << QStringLiteral("'a\\b\\'");
        QTest::newRow("empty words") << QStringLiteral("'' \"\" a");
    }

    void splitMatchesTheShell()
    {
        QFETCH(QString, command);
        QProcess sh;
        sh.start(QStringLiteral("/bin/sh"), {QStringLiteral("-c"), QStringLiteral("eval \"set -- $1\"; for a in \"$@\"; do printf '%s\\0' \"$a\"; done"),
                                              QStringLiteral("sh"), command});
        QVERIFY(sh.waitForFinished(kWaitMs));
        QCOMPARE(sh.exitCode(), 0);
        QStringList expected = QString::fromUtf8(sh.readAllStandardOutput()).split(QChar(0));
        expected.removeLast(); // after the last NUL
        const std::optional<QStringList> words = splitShellWords(command);
        QVERIFY(words.has_value());
        QCOMPARE(*words, expected);
    }

    void unclosedQuotesAreRefused()
    {
        for (const QString& command : {QStringLiteral("a 'b"), QStringLiteral("a \"b"), QStringLiteral("a b\\")}) {
            QVERIFY2(!splitShellWords(command).has_value(), qPrintable(command));
            QString error;
            QVERIFY(parseNotifyCommand(command, &error).isEmpty());
            QVERIFY2(error.contains(QStringLiteral("a quote is not closed")), qPrintable(error));
        }
    }

    void programsThatCannotRunAreRefused_data()
    {
        QTest::addColumn<QString>("command");
        QTest::addColumn<QString>("needle");
        QTest::newRow("empty") << QString() << QStringLiteral("--notify-command: give a program");
        QTest::newRow("only spaces") << QStringLiteral("   ") << QStringLiteral("--notify-command: give a program");
        QTest::newRow("not on PATH") << QStringLiteral("no-such-notifier --to ops") << QStringLiteral("no program 'no-such-notifier' on PATH");
        QTest::newRow("missing path") << QStringLiteral("/nonexistent/notify") << QStringLiteral("/nonexistent/notify is not an executable file");
        QTest::newRow("a folder") << QStringLiteral("/tmp") << QStringLiteral("/tmp is not an executable file");
    }

    void programsThatCannotRunAreRefused()
    {
        QFETCH(QString, command);
        QFETCH(QString, needle);
        QString error;
        QVERIFY(parseNotifyCommand(command, &error).isEmpty());
        QVERIFY2(error.contains(needle), qPrintable(error));
        QVERIFY(!error.contains(QLatin1Char('\n')));
        // Not executable: a plain file.
        const QString plain = writeFile(m_dir.filePath(QStringLiteral("plain.sh")), "echo hi\n");
        QVERIFY(parseNotifyCommand(plain, &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("chmod +x")), qPrintable(error));
    }

    void eventsGoOutOneAtATimeInOrder()
    {
        // Each run of the program writes "start", its event line, "end": interleaving would show.
        const QString log = m_dir.filePath(QStringLiteral("order.txt"));
        const QString program = script(QStringLiteral("order.sh"), "echo start >> \"$1\"; cat >> \"$1\"; sleep 0.2; echo end >> \"$1\"\n");
        QString error;
        NotifyCommand command(parseNotifyCommand(QStringLiteral("%1 %2").arg(program, log), &error));
        QSignalSpy drained(&command, &NotifyCommand::drained);
        QSignalSpy problems(&command, &NotifyCommand::problem);
        const QList<RunEvent::Kind> kinds{RunEvent::Kind::Hung, RunEvent::Kind::Failed, RunEvent::Kind::Completed};
        for (int i = 0; i < kinds.size(); ++i) command.send(eventNamed(kinds.at(i), QStringLiteral("/run-%1").arg(i)));
        QVERIFY(!command.idle());
        QVERIFY(drained.wait(kWaitMs));
        QVERIFY(command.idle());
        QCOMPARE(drained.count(), 1);
        QCOMPARE(problems.count(), 0);
        const QStringList lines = linesOf(log);
        QCOMPARE(lines.size(), 9);
        for (int i = 0; i < kinds.size(); ++i) {
            QCOMPARE(lines.at(3 * i), QStringLiteral("start"));
            const QJsonObject event = QJsonDocument::fromJson(lines.at(3 * i + 1).toUtf8()).object();
            QCOMPARE(event.value(QStringLiteral("event")).toString(), runEventKindName(kinds.at(i)));
            QCOMPARE(event.value(QStringLiteral("run_dir")).toString(), QStringLiteral("/run-%1").arg(i));
            QCOMPARE(event.value(QStringLiteral("run")).toString(), QStringLiteral("run-%1").arg(i));
            QCOMPARE(event.value(QStringLiteral("message")).toString(), QStringLiteral("message of /run-%1").arg(i));
            QVERIFY(event.value(QStringLiteral("job_id")).isNull());
            QVERIFY(event.value(QStringLiteral("summary")).isNull());
            QVERIFY(QDateTime::fromString(event.value(QStringLiteral("time")).toString(), Qt::ISODateWithMs).isValid());
            QCOMPARE(lines.at(3 * i + 2), QStringLiteral("end"));
        }
    }

    void aFailingProgramIsReportedAndTheNextEventStillGoes()
    {
        const QString log = m_dir.filePath(QStringLiteral("failing.txt"));
        const QString program = script(QStringLiteral("failing.sh"), "cat >> \"$1\"; echo 'connecting to smtp'; echo 'smtp: relay refused' >&2; exit 3\n");
        QString error;
        NotifyCommand command(parseNotifyCommand(QStringLiteral("%1 %2").arg(program, log), &error));
        QSignalSpy drained(&command, &NotifyCommand::drained);
        QSignalSpy problems(&command, &NotifyCommand::problem);
        command.send(eventNamed(RunEvent::Kind::Hung, QStringLiteral("/a")));
        command.send(eventNamed(RunEvent::Kind::Failed, QStringLiteral("/a")));
        QVERIFY(drained.wait(kWaitMs));
        QCOMPARE(linesOf(log).size(), 2);
        QCOMPARE(problems.count(), 2);
        const QString first = problems.at(0).at(0).toString();
        QVERIFY2(first.contains(QStringLiteral("(the 'hung' event) exited with code 3: smtp: relay refused")), qPrintable(first));
        QVERIFY2(problems.at(1).at(0).toString().contains(QStringLiteral("'failed' event")), qPrintable(problems.at(1).at(0).toString()));
    }

    void aProgramKilledBySignalIsSaidSo()
    {
        const QString program = script(QStringLiteral("killed.sh"), "cat > /dev/null; kill -9 $$\n");
        QString error;
        NotifyCommand command(parseNotifyCommand(program, &error));
        QSignalSpy drained(&command, &NotifyCommand::drained);
        QSignalSpy problems(&command, &NotifyCommand::problem);
        command.send(eventNamed(RunEvent::Kind::Completed, QStringLiteral("/k")));
        QVERIFY(drained.wait(kWaitMs));
        QCOMPARE(problems.count(), 1);
        QVERIFY2(problems.at(0).at(0).toString().endsWith(QStringLiteral("(the 'completed' event) was ended by signal 9")),
                 qPrintable(problems.at(0).at(0).toString()));
    }

    void aStuckProgramIsEndedAfterItsTimeout()
    {
        const QString pidFile = m_dir.filePath(QStringLiteral("stuck.pid"));
        const QString program = script(QStringLiteral("stuck.sh"), "trap '' TERM\necho $$ > \"$1\"\nexec 0<&-\nwhile :; do sleep 0.1; done\n");
        QString error;
        NotifyCommand command(parseNotifyCommand(QStringLiteral("%1 %2").arg(program, pidFile), &error), 500);
        QSignalSpy drained(&command, &NotifyCommand::drained);
        QSignalSpy problems(&command, &NotifyCommand::problem);
        QElapsedTimer clock;
        clock.start();
        command.send(eventNamed(RunEvent::Kind::Completed, QStringLiteral("/s")));
        QVERIFY(drained.wait(kWaitMs));
        QVERIFY2(clock.elapsed() >= 500 && clock.elapsed() < 8000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(problems.count(), 1);
        QVERIFY2(problems.at(0).at(0).toString().contains(QStringLiteral("was still running after 0 s and was ended")) ||
                     problems.at(0).at(0).toString().contains(QStringLiteral("was still running after")),
                 qPrintable(problems.at(0).at(0).toString()));
        const qint64 pid = readAll(pidFile).trimmed().toLongLong();
        QVERIFY(pid > 0);
        QVERIFY(QTest::qWaitFor([&] { return processGone(pid); }, kWaitMs));
    }

    void abandonEndsTheRunningProgramAtOnce()
    {
        const QString pidFile = m_dir.filePath(QStringLiteral("abandoned.pid"));
        const QString program = script(QStringLiteral("slow.sh"), "echo $$ > \"$1\"\nexec sleep 60\n");
        QString error;
        NotifyCommand command(parseNotifyCommand(QStringLiteral("%1 %2").arg(program, pidFile), &error));
        command.send(eventNamed(RunEvent::Kind::Stopped, QStringLiteral("/s")));
        command.send(eventNamed(RunEvent::Kind::Completed, QStringLiteral("/s")));
        QVERIFY(QTest::qWaitFor([&] { return !readAll(pidFile).trimmed().isEmpty(); }, kWaitMs));
        const qint64 pid = readAll(pidFile).trimmed().toLongLong();
        command.abandon();
        QVERIFY(command.idle());
        QVERIFY(processGone(pid));
    }
};

QTEST_GUILESS_MAIN(TestNotifyCommand)
#include "tst_notify_command.moc"
