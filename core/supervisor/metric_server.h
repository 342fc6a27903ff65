#pragma once
// The supervisor's end of the reporting socket: a QLocalServer in a private (0700) directory, one per
// run, with a random token. A connection must say hello with the token within
// protocol::kHelloTimeoutMs, and the connecting process (SO_PEERCRED, from the kernel, not from the
// frame) must be the rank it claims to be or that rank's descendant: holding the token is not enough
// to speak for rank 0. A wrong token, pid or protocol version, a malformed or oversized frame closes
// the connection, is logged, and nothing it sent is used. At most protocol::kMaxConnections are open.
// What each frame says is read by report_frame.h (no sockets there).
// Under Slurm a rank may run on another node: listenTcp() also opens a TCP endpoint on one address.
// There the kernel cannot name the peer's pid and the network may be read, so each connection gets a fresh
// nonce, the hello proves the token with its MAC and every frame carries its own (protocol/frame_mac.h); the
// peer check is asked with pid 0. At most protocol::kMaxConnectionsPerPeer TCP connections from one address,
// and in all at most protocol::kMaxConnections or well below this process's descriptor limit; rejections are
// logged a few per ten seconds, then counted.
// Metrics are accepted from rank 0 only; heartbeats from every rank. A "scalars" frame's values are
// checked one by one (finite, a bounded printable name, at most protocol::kMaxScalarsPerFrame): a bad
// value is dropped and counted, the rest of the frame is used.

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QObject>
#include <QTemporaryDir>
#include <QTimer>

#include <functional>
#include <memory>
#include <string>

#include "supervisor/frame_decoder.h"
#include "supervisor/report_frame.h"
#include "supervisor/run_types.h"

class QHostAddress;
class QIODevice;
class QLocalServer;
class QTcpServer;

namespace ringmaster::supervisor {

class MetricServer : public QObject
{
    Q_OBJECT

public:
    explicit MetricServer(QObject* parent = nullptr);
    ~MetricServer() override;

    // Decides whether process `pid` may speak for `rank` (set before listen(); without one every
    // pid is accepted, as in tests of the protocol alone).
    void setPeerCheck(std::function<bool(int rank, qint64 pid)> check) { m_peerCheck = std::move(check); }
    // Creates the private directory and listens; returns false with error() set.
    bool listen();
    // Also listens on `address` (an ephemeral port), after listen(); false with error() set.
    bool listenTcp(const QHostAddress& address);
    QString socketPath() const;
    // "HOST:PORT" of the TCP endpoint ("[v6]:PORT" for IPv6), empty without one.
    QString tcpEndpoint() const;
    QString token() const { return m_token; }
    QString error() const { return m_error; }

    qint64 rejectedConnections() const { return m_rejectedConnections; }
    int openConnections() const { return static_cast<int>(m_peers.size()); }
    // Scalars dropped so far (bad name or value, over the per-frame limit, or a frame without a valid step).
    qint64 droppedScalars() const { return m_droppedScalars; }

Q_SIGNALS:
    void stepReceived(const ringmaster::supervisor::StepMetric& metric);
    void evalReceived(const ringmaster::supervisor::EvalMetric& metric);
    void checkpointReceived(qint64 step, const QString& path);
    void statusReceived(const QString& status, const QJsonObject& frame);
    // timing: the rank's step timing since its previous heartbeat (invalid when it sent none).
    void heartbeatReceived(int rank, qint64 step, const QString& phase, const ringmaster::supervisor::StepTiming& timing);
    // A heartbeat's "usage": what the rank says its own process uses, as system.csv rows stamped now (report_frame.h
    // keeps only sane values). A Slurm run records them; a local run samples its ranks itself.
    void usageReceived(const QList<ringmaster::supervisor::SystemSample>& samples);
    // A "scalars" frame from rank 0 (any named values of one step), with at least one valid value.
    void scalarsReceived(const ringmaster::supervisor::ScalarBatch& scalars);
    // A connection said hello with the token and was admitted as `rank`; `transport` says how it came
    // ("this host's socket", or "TCP from ADDRESS").
    void peerAccepted(int rank, const QString& transport);
    // Where an admitted rank runs, from its hello: its pid (the kernel's word on this host's socket, the MAC-proven
    // claim over TCP) and its node name (empty when it sent none, or none that is plain: report_frame.h).
    void rankLocated(int rank, qint64 pid, const QString& node);
    // Something the run's log should say (rejected connections, protocol errors).
    void notice(const QString& message);

private:
    struct Peer
    {
        FrameDecoder decoder;
        int rank = -1; // -1 until the hello is accepted
        QTimer* helloDeadline = nullptr;
        bool tcp = false;
        std::string nonce;        // TCP: this connection's challenge
        quint64 sequence = 0;     // TCP: the last frame's sequence number
    };

    void onNewConnection();
    void onNewTcpConnection();
    // Takes a new connection (either kind) under the connection limit and its hello deadline.
    void admit(QIODevice* socket, bool tcp);
    void onReadyRead(QIODevice* socket);
    void reject(QIODevice* socket, const QString& why);
    // A rejection's line, rate-limited (a few per window, then a count).
    void noteRejection(const QString& message);
    void forget(QIODevice* socket);
    void dispatch(int rank, const ReportFrame& frame, const QJsonObject& object);
    void dispatchScalars(const ReportFrame& frame);

    std::unique_ptr<QTemporaryDir> m_directory;
    QLocalServer* m_server = nullptr;
    QTcpServer* m_tcpServer = nullptr;
    QString m_token;
    QString m_error;
    QHash<QIODevice*, Peer*> m_peers;
    std::function<bool(int, qint64)> m_peerCheck;
    qint64 m_rejectedConnections = 0;
    QElapsedTimer m_noticeWindow;
    int m_noticesInWindow = 0;
    qint64 m_suppressedNotices = 0;
    qint64 m_droppedScalars = 0;
};

} // namespace ringmaster::supervisor
