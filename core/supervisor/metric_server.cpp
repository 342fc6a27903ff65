#include "supervisor/metric_server.h"

#include <algorithm>

#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonValue>
#include <QHostAddress>
#include <QLocalServer>
#include <QLocalSocket>
#include <QTcpServer>
#include <QTcpSocket>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <sys/resource.h>
#include <sys/socket.h>

#include "protocol/wire.h"
#include "protocol/frame_mac.h"

namespace ringmaster::supervisor {
namespace {

QString randomToken()
{
    QByteArray bytes(32, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32*>(bytes.data()), bytes.size() / 4);
    return QString::fromLatin1(bytes.toHex());
}

// Equal secrets, in a time that does not depend on where they first differ (the length is not secret).
bool sameSecret(const QString& given, const QString& expected)
{
    return protocol::sameSecret(given.toStdString(), expected.toStdString());
}

// Connections open at once: the protocol's cap, kept well below this process's descriptor limit (each is one).
int connectionLimit()
{
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return protocol::kMaxConnections;
    const long spare = static_cast<long>(files.rlim_cur) - 128; // the ranks' pipes, logs, the run's files
    return static_cast<int>(std::clamp<long>(spare, 16, protocol::kMaxConnections));
}

QString peerAddress(QIODevice* socket)
{
    const auto* tcp = qobject_cast<QTcpSocket*>(socket);
    return tcp ? tcp->peerAddress().toString() : QString();
}

constexpr int kNoticesPerWindow = 5;
constexpr qint64 kNoticeWindowMs = 10000;

// The pid of the process at the other end, from the kernel (not from anything it sent); 0 if unknown
// (always over TCP).
qint64 peerPid(QIODevice* device)
{
    auto* socket = qobject_cast<QLocalSocket*>(device);
    if (!socket) return 0;
    ucred credentials{};
    socklen_t length = sizeof credentials;
    const auto fd = static_cast<int>(socket->socketDescriptor());
    if (fd < 0 || ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) return 0;
    return credentials.pid;
}

} // namespace

MetricServer::MetricServer(QObject* parent)
    : QObject(parent)
{
}

MetricServer::~MetricServer()
{
    for (auto it = m_peers.begin(); it != m_peers.end(); ++it) {
        delete it.value()->helloDeadline;
        delete it.value();
    }
}

bool MetricServer::listen()
{
    // A private directory: only this user can reach the socket, even before the token is checked.
    QString base = qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")
                       ? QString()
                       : QStandardPaths::writableLocation(QStandardPaths::RuntimeLocation);
    if (base.isEmpty() || !QFileInfo(base).isWritable()) base = QDir::tempPath();
    m_directory = std::make_unique<QTemporaryDir>(base + QStringLiteral("/ringmaster-XXXXXX"));
    if (!m_directory->isValid()) {
        m_error = QStringLiteral("cannot create a private socket directory under %1: %2").arg(base, m_directory->errorString());
        return false;
    }
    QFile::setPermissions(m_directory->path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
    m_token = randomToken();
    m_server = new QLocalServer(this);
    m_server->setSocketOptions(QLocalServer::UserAccessOption);
    connect(m_server, &QLocalServer::newConnection, this, &MetricServer::onNewConnection);
    if (!m_server->listen(m_directory->filePath(QStringLiteral("metrics.sock")))) {
        m_error = QStringLiteral("cannot listen on %1: %2").arg(m_directory->filePath(QStringLiteral("metrics.sock")),
                                                                m_server->errorString());
        return false;
    }
    return true;
}

QString MetricServer::socketPath() const
{
    return m_server ? m_server->fullServerName() : QString();
}

bool MetricServer::listenTcp(const QHostAddress& address)
{
    m_tcpServer = new QTcpServer(this);
    connect(m_tcpServer, &QTcpServer::newConnection, this, &MetricServer::onNewTcpConnection);
    if (!m_tcpServer->listen(address, 0)) {
        m_error = QStringLiteral("cannot listen on TCP %1: %2").arg(address.toString(), m_tcpServer->errorString());
        delete m_tcpServer;
        m_tcpServer = nullptr;
        return false;
    }
    return true;
}

QString MetricServer::tcpEndpoint() const
{
    if (!m_tcpServer) return {};
    const QHostAddress address = m_tcpServer->serverAddress();
    const QString host = address.protocol() == QAbstractSocket::IPv6Protocol ? QStringLiteral("[%1]").arg(address.toString())
                                                                              : address.toString();
    return QStringLiteral("%1:%2").arg(host).arg(m_tcpServer->serverPort());
}

void MetricServer::onNewConnection()
{
    while (QLocalSocket* socket = m_server->nextPendingConnection()) {
        connect(socket, &QLocalSocket::disconnected, this, [this, socket] { forget(socket); });
        admit(socket, false);
    }
}

void MetricServer::onNewTcpConnection()
{
    while (QTcpSocket* socket = m_tcpServer->nextPendingConnection()) {
        connect(socket, &QTcpSocket::disconnected, this, [this, socket] { forget(socket); });
        admit(socket, true);
    }
}

void MetricServer::admit(QIODevice* socket, bool tcp)
{
    const QString address = peerAddress(socket);
    QString refused;
    // The TCP endpoint and this host's socket (reachable by this user only) have a cap each, so that what comes
    // over the network cannot crowd out the ranks on this host.
    int ofThisKind = 0;
    for (auto it = m_peers.cbegin(); it != m_peers.cend(); ++it) ofThisKind += it.value()->tcp == tcp;
    if (ofThisKind >= connectionLimit() / 2 && tcp) {
        refused = QStringLiteral("%1 TCP connections are already open").arg(ofThisKind);
    } else if (m_peers.size() >= connectionLimit()) {
        refused = QStringLiteral("%1 connections are already open").arg(m_peers.size());
    } else if (tcp) {
        int fromThere = 0;
        for (auto it = m_peers.cbegin(); it != m_peers.cend(); ++it) fromThere += it.value()->tcp && peerAddress(it.key()) == address;
        if (fromThere >= protocol::kMaxConnectionsPerPeer) refused = QStringLiteral("%1 connections from there are already open").arg(fromThere);
    }
    if (!refused.isEmpty()) {
        ++m_rejectedConnections;
        noteRejection(QStringLiteral("rejected a reporting connection%1: %2")
                          .arg(address.isEmpty() ? QString() : QStringLiteral(" from ") + address, refused));
        socket->disconnect(this);
        if (auto* remote = qobject_cast<QTcpSocket*>(socket)) remote->abort();
        else socket->close();
        socket->deleteLater();
        return;
    }
    auto* peer = new Peer{FrameDecoder(protocol::kMaxFrameBytes), -1, new QTimer, tcp, {}, 0};
    if (tcp) {
        // A fresh nonce per connection: what the hello and every frame are bound to (frame_mac.h).
        QByteArray nonce(protocol::kNonceBytes, Qt::Uninitialized);
        QRandomGenerator::system()->fillRange(reinterpret_cast<quint32*>(nonce.data()), nonce.size() / 4);
        peer->nonce = nonce.toHex().toStdString();
        const QByteArray challenge = QByteArrayLiteral("{\"v\":") + QByteArray::number(protocol::kProtocolVersion) + ",\"type\":\"" +
                                     protocol::kTypeChallenge + "\",\"" + protocol::kKeyNonce + "\":\"" + nonce.toHex() + "\"}\n";
        socket->write(challenge);
    }
    peer->helloDeadline->setSingleShot(true);
    connect(peer->helloDeadline, &QTimer::timeout, this, [this, socket] {
        reject(socket, QStringLiteral("no hello within %1 ms").arg(protocol::kHelloTimeoutMs));
    });
    peer->helloDeadline->start(protocol::kHelloTimeoutMs);
    m_peers.insert(socket, peer);
    connect(socket, &QIODevice::readyRead, this, [this, socket] { onReadyRead(socket); });
}

void MetricServer::forget(QIODevice* socket)
{
    if (Peer* gone = m_peers.take(socket)) {
        delete gone->helloDeadline;
        delete gone;
    }
    socket->deleteLater();
}

void MetricServer::noteRejection(const QString& message)
{
    // A flood of connections must not flood the log: a few lines per window, then a count.
    if (!m_noticeWindow.isValid() || m_noticeWindow.elapsed() > kNoticeWindowMs) {
        if (m_suppressedNotices > 0) {
            Q_EMIT notice(QStringLiteral("%1 more reporting connections were rejected in %2 s (not each logged)")
                              .arg(m_suppressedNotices).arg(m_noticeWindow.elapsed() / 1000));
        }
        m_noticeWindow.start();
        m_noticesInWindow = 0;
        m_suppressedNotices = 0;
    }
    if (m_noticesInWindow++ < kNoticesPerWindow) Q_EMIT notice(message);
    else ++m_suppressedNotices;
}

void MetricServer::reject(QIODevice* socket, const QString& why)
{
    ++m_rejectedConnections;
    const QString address = peerAddress(socket);
    noteRejection(QStringLiteral("rejected a reporting connection%1: %2").arg(address.isEmpty() ? QString() : QStringLiteral(" from ") + address, why));
    if (Peer* peer = m_peers.take(socket)) {
        peer->helloDeadline->stop();
        peer->helloDeadline->deleteLater(); // may be the timer whose timeout called us
        delete peer;
    }
    socket->disconnect(this);
    if (auto* local = qobject_cast<QLocalSocket*>(socket)) local->abort();
    else if (auto* remote = qobject_cast<QTcpSocket*>(socket)) remote->abort();
    socket->deleteLater();
}

void MetricServer::onReadyRead(QIODevice* socket)
{
    Peer* peer = m_peers.value(socket);
    if (!peer) return;
    for (QByteArray line : peer->decoder.takeLines(socket->readAll())) {
        if (peer->tcp && peer->rank >= 0) {
            // "<MAC> <frame>": the frame's own MAC with this connection's nonce and the next sequence number.
            const qsizetype space = line.indexOf(' ');
            const std::string mac = space == protocol::kMacHexLength ? line.left(space).toStdString() : std::string();
            line = line.mid(space + 1);
            if (mac.empty() || !protocol::sameSecret(mac, protocol::frameMac(m_token.toStdString(), peer->nonce, ++peer->sequence, line.toStdString()))) {
                return reject(socket, QStringLiteral("frame %1 has no valid MAC (replayed, changed or forged)").arg(peer->sequence));
            }
        }
        QJsonObject object;
        QString error;
        if (!FrameDecoder::parseFrame(line, &object, &error)) return reject(socket, error);
        const ReportFrame frame = readReportFrame(object);
        if (frame.version != protocol::kProtocolVersion) {
            return reject(socket, QStringLiteral("protocol version %1, expected %2").arg(frame.version).arg(protocol::kProtocolVersion));
        }
        if (peer->rank < 0) {
            if (frame.kind != ReportFrame::Kind::Hello || frame.rank < 0) {
                return reject(socket, frame.kind == ReportFrame::Kind::Hello ? QStringLiteral("wrong token or rank")
                                                                             : QStringLiteral("first frame was not a hello"));
            }
            // Over TCP the hello proves the token without sending it; on this host's socket it carries the token.
            const bool proven = peer->tcp ? protocol::sameSecret(object.value(QLatin1String(protocol::kKeyMac)).toString().toStdString(),
                                                                 protocol::helloMac(m_token.toStdString(), peer->nonce, frame.rank, frame.pid))
                                          : sameSecret(frame.token, m_token);
            if (!proven) return reject(socket, QStringLiteral("wrong token or rank"));
            const qint64 pid = peerPid(socket);
            if (pid > 0 && frame.pid != pid) {
                return reject(socket, QStringLiteral("hello claims pid %1 but the connection comes from pid %2").arg(frame.pid).arg(pid));
            }
            if (m_peerCheck && !m_peerCheck(frame.rank, pid)) {
                return reject(socket, QStringLiteral("process %1 is not rank %2 of this run").arg(pid).arg(frame.rank));
            }
            peer->rank = frame.rank;
            peer->helloDeadline->stop();
            const auto* tcp = qobject_cast<QTcpSocket*>(socket);
            Q_EMIT rankLocated(frame.rank, frame.pid, frame.host);
            Q_EMIT peerAccepted(frame.rank, tcp ? QStringLiteral("TCP from %1").arg(tcp->peerAddress().toString())
                                                : QStringLiteral("this host's socket"));
            continue;
        }
        dispatch(peer->rank, frame, object);
    }
    if (peer->decoder.failed()) reject(socket, peer->decoder.error());
}

void MetricServer::dispatch(int rank, const ReportFrame& frame, const QJsonObject& object)
{
    using Kind = ReportFrame::Kind;
    if (frame.kind == Kind::Heartbeat) {
        Q_EMIT heartbeatReceived(rank, frame.heartbeatStep, frame.phase, frame.timing);
        if (!frame.usage.isEmpty()) {
            const double now = static_cast<double>(QDateTime::currentMSecsSinceEpoch()) / 1000.0;
            QList<SystemSample> samples;
            for (const auto& [name, value] : frame.usage) samples.append({now, rank, name, value});
            Q_EMIT usageReceived(samples);
        }
        return;
    }
    if (rank != 0) {
        Q_EMIT notice(QStringLiteral("ignored a '%1' frame from rank %2: only rank 0 reports metrics").arg(frame.type).arg(rank));
        return;
    }
    switch (frame.kind) {
    case Kind::Step: Q_EMIT stepReceived(frame.step); break;
    case Kind::Eval: Q_EMIT evalReceived(frame.eval); break;
    case Kind::Checkpoint: Q_EMIT checkpointReceived(frame.checkpointStep, frame.checkpointPath); break;
    case Kind::Status: Q_EMIT statusReceived(frame.status, object); break;
    case Kind::Scalars: dispatchScalars(frame); break;
    case Kind::Hello:
    case Kind::Heartbeat:
    case Kind::Other: break;
    }
}

void MetricServer::dispatchScalars(const ReportFrame& frame)
{
    if (frame.droppedScalars > 0) {
        // Said once per run: a script that keeps sending a bad value must not flood the log.
        if (m_droppedScalars == 0) {
            Q_EMIT notice(QStringLiteral("dropped scalars from rank 0: %1 (further drops are counted, not logged)").arg(frame.scalarsProblem));
        }
        m_droppedScalars += frame.droppedScalars;
    }
    if (!frame.scalars.values.isEmpty()) Q_EMIT scalarsReceived(frame.scalars);
}

} // namespace ringmaster::supervisor
