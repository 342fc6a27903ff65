// The app's desktop notifications (ui/desktop_notifier.h) over a real session bus: ctest runs this test under
// dbus-run-session, and the test serves org.freedesktop.Notifications itself on a second connection to that bus
// (a stand-in for GNOME Shell or dunst that records each Notify call). Real runs from the real MainWindow (a
// script on /usr/bin/python3): a run that completes and one that fails each become one notification with the
// run's title, its one-line message and the urgency the spec gives them; a run started with "Notify" off shows
// nothing (the next run's notification is the first the server gets); the setting is remembered; and without a
// notification service the log says so once and the run is unaffected.
#include <QAction>
#include <QComboBox>
#include <QLineEdit>
#include <QSpinBox>
#include <QDBusConnection>
#include <QDBusConnectionInterface>
#include <QDir>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "supervisor/app_settings.h"
#include "ui/desktop_notifier.h"
#include "ui/panes/gpu_panel.h"
#include "ui/form/job_form.h"
#include "ui/panes/log_panel.h"
#include "ui/main_window.h"
#include "supervisor/run_supervisor.h"
#include "ui/form/script_fields.h"

using namespace ringmaster;
using namespace ringmaster::ui;

namespace {

constexpr int kRunTimeoutMs = 180000;
const QString kService = QStringLiteral("org.freedesktop.Notifications");

struct Notification
{
    QString app;
    QString icon;
    QString summary;
    QString body;
    QVariantMap hints;
};

} // namespace

// What a notification server exports (the parts of the spec a client calls).
class FakeNotificationServer : public QObject
{
    Q_OBJECT
    Q_CLASSINFO("D-Bus Interface", "org.freedesktop.Notifications")

public:
    QList<Notification> received;

public Q_SLOTS:
    uint Notify(const QString& app, uint replacesId, const QString& icon, const QString& summary, const QString& body,
                const QStringList& actions, const QVariantMap& hints, int timeout)
    {
        Q_UNUSED(replacesId);
        Q_UNUSED(actions);
        Q_UNUSED(timeout);
        received.append({app, icon, summary, body, hints});
        return static_cast<uint>(received.size());
    }
    QStringList GetCapabilities() { return {QStringLiteral("body")}; }
};

class TestDesktopNotifications : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_root;
    FakeNotificationServer m_server;
    QDBusConnection m_serverBus{QString()};

    QString writeScript(const QString& name, const QByteArray& body)
    {
        const QString path = m_root.filePath(name);
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly)) return {};
        file.write(body);
        return path;
    }

    // A window ready to run SCRIPT on 2 CPU ranks (the interpreter is checked, so Start waits for it).
    void prepare(MainWindow& window, const QString& script)
    {
        window.setConfirmOnClose(false);
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        window.jobForm()->outputEdit()->setText(m_root.filePath(QStringLiteral("runs")));
        window.jobForm()->kindBox()->setCurrentIndex(1);
        window.jobForm()->scriptFields()->scriptEdit()->setText(script);
        window.jobForm()->scriptFields()->pythonEdit()->setText(QStringLiteral("/usr/bin/python3"));
        QVERIFY(QTest::qWaitFor([&] { return window.startAction()->isEnabled(); }, kRunTimeoutMs));
    }

    void runToTheEnd(MainWindow& window)
    {
        QSignalSpy states(window.supervisor(), &supervisor::RunSupervisor::stateChanged);
        QSignalSpy finished(window.supervisor(), &supervisor::RunSupervisor::finished);
        window.startAction()->trigger();
        QVERIFY(finished.wait(kRunTimeoutMs));
        // One final state, the right one at once (no "completed" while a failing rank's end still waits).
        QCOMPARE(finished.count(), 1);
        QCOMPARE(states.last().at(0).value<supervisor::RunState>(), finished.at(0).at(0).value<supervisor::RunState>());
        QCOMPARE(states.count(), 3); // starting, running, and the final state
    }

private Q_SLOTS:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings under a test folder
        QSettings().remove(QLatin1String(supervisor::kDesktopNotificationsKey));
        QVERIFY2(QDBusConnection::sessionBus().isConnected(), "no session bus: ctest runs this test under dbus-run-session");
        m_serverBus = QDBusConnection::connectToBus(QDBusConnection::SessionBus, QStringLiteral("fake-notification-server"));
        QVERIFY(m_serverBus.isConnected());
    }

    void withoutAServiceTheLogSaysSoOnce()
    {
        QVERIFY(!QDBusConnection::sessionBus().interface()->isServiceRegistered(kService));
        MainWindow window;
        prepare(window, writeScript(QStringLiteral("quick.py"), "print('step 1 loss=0.5')\n"));
        runToTheEnd(window);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        QVERIFY(QTest::qWaitFor([&] { return window.logPanel()->lines(-1).join(QLatin1Char('\n')).contains(QStringLiteral("desktop notifications are unavailable")); },
                                10000));
        QCOMPARE(window.logPanel()->lines(-1).join(QLatin1Char('\n')).count(QStringLiteral("desktop notifications are unavailable")), 1);
    }

    void completedAndFailedRunsAreNotified()
    {
        QVERIFY(m_serverBus.registerObject(QStringLiteral("/org/freedesktop/Notifications"), &m_server, QDBusConnection::ExportAllSlots));
        QVERIFY(m_serverBus.registerService(kService));
        MainWindow window;
        QVERIFY(window.notifyAction()->isChecked()); // on by default
        prepare(window, writeScript(QStringLiteral("ok.py"), "import os\nfor step in range(3):\n    print('step %d loss=%.2f' % (step, 1.0 / (step + 1)))\n"));
        runToTheEnd(window);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Completed);
        QVERIFY(QTest::qWaitFor([&] { return m_server.received.size() == 1; }, 10000));
        const QString run = QFileInfo(window.supervisor()->runDir()).fileName();
        Notification done = m_server.received.at(0);
        QCOMPARE(done.app, QStringLiteral("Ringmaster"));
        QCOMPARE(done.icon, QStringLiteral("ringmaster"));
        QCOMPARE(done.summary, QStringLiteral("run %1 completed").arg(run));
        QVERIFY2(done.body.startsWith(QStringLiteral("step 2: loss 0.33")), qPrintable(done.body));
        QCOMPARE(done.hints.value(QStringLiteral("desktop-entry")).toString(), QStringLiteral("ringmaster"));
        QCOMPARE(done.hints.value(QStringLiteral("urgency")).toInt(), 1);

        // A rank that fails: critical, with the root cause (markup-escaped: servers may read the body as markup).
        prepare(window, writeScript(QStringLiteral("bad.py"), "import os, sys\nif os.environ['RANK'] == '1':\n    sys.exit('a <bad> & broken rank')\n"));
        runToTheEnd(window);
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Failed);
        QVERIFY(QTest::qWaitFor([&] { return m_server.received.size() == 2; }, 10000));
        const Notification failed = m_server.received.at(1);
        QCOMPARE(failed.summary, QStringLiteral("run %1 failed").arg(QFileInfo(window.supervisor()->runDir()).fileName()));
        QCOMPARE(failed.body, QStringLiteral("rank 1 exited with code 1"));
        QCOMPARE(failed.hints.value(QStringLiteral("urgency")).toInt(), 2);
    }

    void turnedOffShowsNothingAndIsRemembered()
    {
        m_server.received.clear();
        {
            MainWindow window;
            window.notifyAction()->setChecked(false);
            prepare(window, writeScript(QStringLiteral("quiet.py"), "print('step 1 loss=0.5')\n"));
            runToTheEnd(window);
            QCOMPARE(window.notifier()->sentCount(), 0);
        }
        MainWindow again;
        QVERIFY(!again.notifyAction()->isChecked()); // remembered
        QVERIFY(!again.notifier()->isEnabled());
        again.notifyAction()->setChecked(true);
        prepare(again, writeScript(QStringLiteral("loud.py"), "print('step 7 loss=0.25')\n"));
        runToTheEnd(again);
        // One connection's messages arrive in order: the first the server gets is this run's.
        QVERIFY(QTest::qWaitFor([&] { return !m_server.received.isEmpty(); }, 10000));
        QCOMPARE(m_server.received.size(), 1);
        QVERIFY2(m_server.received.at(0).body.startsWith(QStringLiteral("step 7: loss 0.25")), qPrintable(m_server.received.at(0).body));
        QVERIFY(QSettings().value(QLatin1String(supervisor::kDesktopNotificationsKey)).toBool());
    }

    void aStragglerIsNotified()
    {
        // The built-in trainer, its rank 1 slowed by the trainer's test hook: named after 2 s, and notified.
        m_server.received.clear();
        qputenv("RINGMASTER_TEST_SLOW_RANK", "1:30");
        MainWindow window;
        window.setConfirmOnClose(false);
        window.gpuPanel()->cpuRanksBox()->setValue(2);
        window.jobForm()->outputEdit()->setText(m_root.filePath(QStringLiteral("runs")));
        window.jobForm()->stragglerAfterBox()->setValue(2);
        QVERIFY(QTest::qWaitFor([&] { return window.startAction()->isEnabled(); }, kRunTimeoutMs));
        window.startAction()->trigger();
        const bool named = QTest::qWaitFor([&] { return !m_server.received.isEmpty() || supervisor::isFinal(window.supervisor()->state()); },
                                           kRunTimeoutMs);
        qunsetenv("RINGMASTER_TEST_SLOW_RANK");
        QVERIFY(named);
        QCOMPARE(m_server.received.size(), 1);
        const Notification straggler = m_server.received.at(0);
        QCOMPARE(straggler.summary, QStringLiteral("run %1: rank 1 is a straggler").arg(QFileInfo(window.supervisor()->runDir()).fileName()));
        QVERIFY2(straggler.body.startsWith(QStringLiteral("rank 1 computes ")), qPrintable(straggler.body));
        QCOMPARE(straggler.hints.value(QStringLiteral("urgency")).toInt(), 1);
        QSignalSpy finished(window.supervisor(), &supervisor::RunSupervisor::finished);
        window.stopAction()->trigger();
        QVERIFY(finished.wait(60000));
        QCOMPARE(window.supervisor()->state(), supervisor::RunState::Stopped);
        QTest::qWait(200);
        QCOMPARE(m_server.received.size(), 1); // a run stopped by the user shows nothing more
    }
};

QTEST_MAIN(TestDesktopNotifications)
#include "tst_desktop_notifications.moc"
