#pragma once
// The app's desktop notifications: a run that completes, fails or hangs (run_event.h) becomes a notification
// through the freedesktop notification service on the session bus (org.freedesktop.Notifications.Notify),
// which every Linux desktop runs (GNOME Shell, KDE Plasma, dunst, mako…), so the user hears of it while
// working in another window. A run the user stopped here is no news and shows nothing. The call is
// asynchronous and never blocks the GUI; without a service (a bare X session, no session bus) the first
// failure is said once through unavailable() and the app goes on. Turned on or off by the window's
// "Notify" action (kDesktopNotificationsKey in app_settings.h).

#include <QObject>
#include <QString>

namespace ringmaster::supervisor {
class RunSupervisor;
struct RunEvent;
} // namespace ringmaster::supervisor

namespace ringmaster::ui {

class DesktopNotifier : public QObject
{
    Q_OBJECT

public:
    // Follows the supervisor's runs (supervisor::RunEventWatch).
    explicit DesktopNotifier(supervisor::RunSupervisor* supervisor, QObject* parent = nullptr);

    bool isEnabled() const { return m_enabled; }
    void setEnabled(bool enabled) { m_enabled = enabled; }
    // Shows the event (when enabled, and when it is news: completed, failed, hung).
    void show(const supervisor::RunEvent& event);
    // Notifications asked of the bus so far.
    int sentCount() const { return m_sent; }

Q_SIGNALS:
    // The first call the bus refused, in one line (later failures are not repeated).
    void unavailable(const QString& line);

private:
    bool m_enabled = true;
    bool m_saidUnavailable = false;
    int m_sent = 0;
};

} // namespace ringmaster::ui
