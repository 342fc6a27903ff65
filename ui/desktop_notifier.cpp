#include "ui/desktop_notifier.h"

#include <QDBusConnection>
#include <QDBusMessage>
#include <QDBusPendingCallWatcher>
#include <QDBusPendingReply>
#include <QStringList>
#include <QVariantMap>

#include "supervisor/run_event.h"
#include "supervisor/run_supervisor.h"

namespace ringmaster::ui {
namespace {

const QString kService = QStringLiteral("org.freedesktop.Notifications");
const QString kPath = QStringLiteral("/org/freedesktop/Notifications");
constexpr char kDesktopEntry[] = "ringmaster"; // packaging/ringmaster.desktop, also the icon's name
constexpr uchar kUrgencyNormal = 1;
constexpr uchar kUrgencyCritical = 2;
constexpr int kServerDefaultTimeout = -1;

} // namespace

DesktopNotifier::DesktopNotifier(supervisor::RunSupervisor* supervisor, QObject* parent)
    : QObject(parent)
{
    auto* watch = new supervisor::RunEventWatch(supervisor, this);
    connect(watch, &supervisor::RunEventWatch::happened, this, &DesktopNotifier::show);
}

void DesktopNotifier::show(const supervisor::RunEvent& event)
{
    using Kind = supervisor::RunEvent::Kind;
    if (!m_enabled || event.kind == Kind::Stopped) return;
    const bool bad = event.kind == Kind::Failed || event.kind == Kind::Hung;
    QVariantMap hints;
    hints.insert(QStringLiteral("desktop-entry"), QString::fromLatin1(kDesktopEntry));
    hints.insert(QStringLiteral("urgency"), QVariant::fromValue(bad ? kUrgencyCritical : kUrgencyNormal));
    QDBusMessage call = QDBusMessage::createMethodCall(kService, kPath, kService, QStringLiteral("Notify"));
    // The body may be read as markup by the server: the message is plain text.
    call << QStringLiteral("Ringmaster") << 0u << QString::fromLatin1(kDesktopEntry) << event.title << event.message.toHtmlEscaped()
         << QStringList() << hints << kServerDefaultTimeout;
    ++m_sent;
    auto* watcher = new QDBusPendingCallWatcher(QDBusConnection::sessionBus().asyncCall(call), this);
    connect(watcher, &QDBusPendingCallWatcher::finished, this, [this](QDBusPendingCallWatcher* done) {
        done->deleteLater();
        const QDBusPendingReply<uint> reply = *done;
        if (!reply.isError() || m_saidUnavailable) return;
        m_saidUnavailable = true;
        Q_EMIT unavailable(QStringLiteral("desktop notifications are unavailable (%1); runs go on, and their end is in the log and the Runs tab")
                               .arg(reply.error().message()));
    });
}

} // namespace ringmaster::ui
