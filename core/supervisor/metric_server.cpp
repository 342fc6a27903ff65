#include "metric_server.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLocalServer>
#include <QLocalSocket>
#include <QRandomGenerator>
#include <QStandardPaths>

#include <cmath>

#include "../protocol/wire.h"

namespace ringmaster::supervisor {
namespace {

QString randomToken()
{
    QByteArray bytes(32, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32*>(bytes.data()), bytes.size() / 4);
    return QString::fromLatin1(bytes.toHex());
}

double numberOr(const QJsonObject& frame, const char* key, double fallback)
{
    const auto value = frame.value(QLatin1String(key));
    return value.isDouble() ? value.toDouble() : fallback;
}

} // namespace

MetricServer::MetricServer(QObject* parent)
    : QObject(parent)
{
}

MetricServer::~MetricServer()
{
    for (auto it = m_peers.begin(); it != m_peers.end(); ++it) delete it.value();
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

void MetricServer::onNewConnection()
{
    while (QLocalSocket* socket = m_server->nextPendingConnection()) {
        m_peers.insert(socket, new Peer{FrameDecoder(protocol::kMaxFrameBytes), -1});
        connect(socket, &QLocalSocket::readyRead, this, [this, socket] { onReadyRead(socket); });
        connect(socket, &QLocalSocket::disconnected, this, [this, socket] {
            delete m_peers.take(socket);
            socket->deleteLater();
        });
    }
}

void MetricServer::reject(QLocalSocket* socket, const QString& why)
{
    ++m_rejectedConnections;
    Q_EMIT notice(QStringLiteral("rejected a reporting connection: %1").arg(why));
    delete m_peers.take(socket);
    socket->disconnect(this);
    socket->abort();
    socket->deleteLater();
}

void MetricServer::onReadyRead(QLocalSocket* socket)
{
    Peer* peer = m_peers.value(socket);
    if (!peer) return;
    const auto frames = peer->decoder.feed(socket->readAll());
    for (const auto& frame : frames) {
        if (frame.value(QStringLiteral("v")).toInt(-1) != protocol::kProtocolVersion) {
            return reject(socket, QStringLiteral("protocol version %1, expected %2")
                                      .arg(frame.value(QStringLiteral("v")).toInt(-1)).arg(protocol::kProtocolVersion));
        }
        const QString type = frame.value(QStringLiteral("type")).toString();
        if (peer->rank < 0) {
            const int rank = frame.value(QStringLiteral("rank")).toInt(-1);
            if (type != QLatin1String("hello") || frame.value(QStringLiteral("token")).toString() != m_token || rank < 0) {
                return reject(socket, type == QLatin1String("hello") ? QStringLiteral("wrong token or rank")
                                                                     : QStringLiteral("first frame was not a hello"));
            }
            peer->rank = rank;
            continue;
        }
        dispatch(peer->rank, frame);
    }
    if (peer->decoder.failed()) reject(socket, peer->decoder.error());
}

void MetricServer::dispatch(int rank, const QJsonObject& frame)
{
    const QString type = frame.value(QStringLiteral("type")).toString();
    if (type == QLatin1String("heartbeat")) {
        Q_EMIT heartbeatReceived(rank, static_cast<qint64>(numberOr(frame, "step", 0)),
                                 frame.value(QStringLiteral("phase")).toString());
        return;
    }
    if (rank != 0) {
        Q_EMIT notice(QStringLiteral("ignored a '%1' frame from rank %2: only rank 0 reports metrics").arg(type).arg(rank));
        return;
    }
    if (type == QLatin1String("step")) {
        StepMetric m;
        m.step = static_cast<qint64>(numberOr(frame, "step", 0));
        m.epoch = static_cast<qint64>(numberOr(frame, "epoch", 0));
        m.loss = numberOr(frame, "loss", std::nan(""));
        m.lr = numberOr(frame, "lr", 0);
        m.samplesPerSec = numberOr(frame, "samples_per_sec", 0);
        m.wallTime = numberOr(frame, "wall_time", 0);
        Q_EMIT stepReceived(m);
    } else if (type == QLatin1String("eval")) {
        EvalMetric m;
        m.epoch = static_cast<qint64>(numberOr(frame, "epoch", 0));
        m.step = static_cast<qint64>(numberOr(frame, "step", 0));
        m.valLoss = numberOr(frame, "val_loss", std::nan(""));
        m.valAccuracy = numberOr(frame, "val_accuracy", std::nan(""));
        Q_EMIT evalReceived(m);
    } else if (type == QLatin1String("checkpoint")) {
        Q_EMIT checkpointReceived(static_cast<qint64>(numberOr(frame, "step", 0)), frame.value(QStringLiteral("path")).toString());
    } else if (type == QLatin1String("status")) {
        Q_EMIT statusReceived(frame.value(QStringLiteral("status")).toString(), frame);
    }
}

} // namespace ringmaster::supervisor
