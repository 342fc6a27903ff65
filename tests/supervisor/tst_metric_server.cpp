// MetricServer on its own: a client that holds the token but is not the rank it claims is rejected
// (the pid comes from the kernel, SO_PEERCRED), a client that never says hello is dropped after the
// hello deadline, and a genuine rank is heard. "scalars" frames are checked value by value, and the
// Python helper module (python/ringmaster) speaks the protocol the server expects.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonArray>
#include <QHostAddress>
#include <QLocalSocket>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include <memory>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "protocol/wire.h"
#include "protocol/frame_mac.h"
#include "supervisor/metric_server.h"
#include "supervisor/proc_info.h"

using namespace ringmaster::supervisor;
namespace protocol = ringmaster::protocol;

namespace {

QByteArray frame(const QJsonObject& object)
{
    QJsonObject withVersion = object;
    withVersion.insert(QString::fromLatin1(protocol::kKeyVersion), protocol::kProtocolVersion);
    return QJsonDocument(withVersion).toJson(QJsonDocument::Compact) + '\n';
}

QByteArray hello(int rank, const QString& token)
{
    return frame({{QString::fromLatin1(protocol::kKeyType), QString::fromLatin1(protocol::kTypeHello)},
                  {QString::fromLatin1(protocol::kKeyRank), rank},
                  {QString::fromLatin1(protocol::kKeyPid), static_cast<qint64>(::getpid())},
                  {QString::fromLatin1(protocol::kKeyToken), token}});
}

QByteArray heartbeat(qint64 step)
{
    return frame({{QString::fromLatin1(protocol::kKeyType), QString::fromLatin1(protocol::kTypeHeartbeat)},
                  {QString::fromLatin1(protocol::kKeyStep), step},
                  {QString::fromLatin1(protocol::kKeyPhase), QStringLiteral("train")}});
}

QByteArray scalars(const QJsonValue& step, const QJsonObject& values)
{
    return frame({{QString::fromLatin1(protocol::kKeyType), QString::fromLatin1(protocol::kTypeScalars)},
                  {QString::fromLatin1(protocol::kKeyStep), step},
                  {QString::fromLatin1(protocol::kKeyValues), values}});
}

// A connected, accepted rank `rank` (this process) on `server`.
std::unique_ptr<QLocalSocket> connectedRank(MetricServer& server, int rank)
{
    auto socket = std::make_unique<QLocalSocket>();
    socket->connectToServer(server.socketPath());
    if (!socket->waitForConnected(5000)) return nullptr;
    socket->write(hello(rank, server.token()));
    socket->flush();
    return socket;
}

// A rank on another node, as the TCP endpoint expects it (wire.h): reads the challenge, then proves the token.
struct TcpRank
{
    QTcpSocket socket;
    std::string token;
    std::string nonce;
    std::uint64_t sequence = 0;
    QByteArray sent; // every byte written, as an eavesdropper would see it

    TcpRank(quint16 port, const QString& secret) : token(secret.toStdString())
    {
        // The server runs on this thread: wait with the event loop running, not in a blocking call.
        socket.connectToHost(QHostAddress(QHostAddress::LocalHost), port);
        if (!QTest::qWaitFor([this] { return socket.canReadLine(); }, 5000)) return;
        const QByteArray line = socket.readLine();
        nonce = QJsonDocument::fromJson(line).object().value(QString::fromLatin1(protocol::kKeyNonce)).toString().toStdString();
    }
    QByteArray hello(int rank) const
    {
        const qint64 pid = ::getpid();
        return frame({{QString::fromLatin1(protocol::kKeyType), QString::fromLatin1(protocol::kTypeHello)},
                      {QString::fromLatin1(protocol::kKeyRank), rank},
                      {QString::fromLatin1(protocol::kKeyPid), pid},
                      {QString::fromLatin1(protocol::kKeyMac), QString::fromStdString(protocol::helloMac(token, nonce, rank, pid))}});
    }
    QByteArray seal(const QByteArray& line)
    {
        const QByteArray body = line.chopped(1);
        return QByteArray::fromStdString(protocol::frameMac(token, nonce, ++sequence, body.toStdString())) + ' ' + line;
    }
    void send(const QByteArray& bytes)
    {
        sent += bytes;
        socket.write(bytes);
        socket.flush();
    }
    // FIRST as it is, then each frame sealed in turn (their sequence numbers in this order).
    void send(const QByteArray& first, const QList<QByteArray>& frames)
    {
        QByteArray bytes = first;
        for (const QByteArray& frame : frames) bytes += seal(frame);
        send(bytes);
    }
};

ScalarBatch batchOf(const QSignalSpy& spy, int index)
{
    return spy.at(index).first().value<ScalarBatch>();
}

} // namespace

class TestMetricServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void tokenWithoutBeingTheRankIsRejected()
    {
        // Rank 0 is some other process (pid 1 here): this test process has the token, claims rank 0,
        // and must not be heard.
        qint64 rankZeroPid = 1;
        MetricServer server;
        QList<int> checkedRanks;
        server.setPeerCheck([&](int rank, qint64 pid) {
            checkedRanks.append(rank);
            return pid == rankZeroPid;
        });
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QSignalSpy heartbeats(&server, &MetricServer::heartbeatReceived);
        QSignalSpy notices(&server, &MetricServer::notice);

        QLocalSocket impostor;
        impostor.connectToServer(server.socketPath());
        QVERIFY(impostor.waitForConnected(5000));
        impostor.write(hello(0, server.token()) + heartbeat(41));
        impostor.flush();
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 1, 5000);
        QCOMPARE(checkedRanks, QList<int>{0});
        QVERIFY(notices.last().first().toString().contains(QStringLiteral("process %1 is not rank 0").arg(::getpid())));
        QTRY_COMPARE_WITH_TIMEOUT(impostor.state(), QLocalSocket::UnconnectedState, 5000);
        QCOMPARE(heartbeats.size(), 0);

        // The same client, when it is the rank's process, is heard.
        rankZeroPid = ::getpid();
        QLocalSocket rank;
        rank.connectToServer(server.socketPath());
        QVERIFY(rank.waitForConnected(5000));
        rank.write(hello(0, server.token()) + heartbeat(42));
        rank.flush();
        QTRY_COMPARE_WITH_TIMEOUT(heartbeats.size(), 1, 5000);
        QCOMPARE(heartbeats.first().at(1).toLongLong(), 42);
        QCOMPARE(server.rejectedConnections(), 1);
    }

    // The TCP endpoint (a rank on another Slurm node): the token never crosses the wire. The server's first line is a
    // fresh nonce; a hello proves the token with its MAC (a nearly-right token, none, or the token sent in clear as
    // on the local socket is refused, nothing it sent used); each later frame carries its own MAC. The kernel cannot
    // name a TCP peer's pid, so the peer check is asked with pid 0.
    void tcpEndpointNeedsProofOfTheToken()
    {
        MetricServer server;
        QList<qint64> checkedPids;
        server.setPeerCheck([&](int, qint64 pid) {
            checkedPids.append(pid);
            return true;
        });
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QVERIFY2(server.listenTcp(QHostAddress(QHostAddress::LocalHost)), qPrintable(server.error()));
        const QString endpoint = server.tcpEndpoint();
        QVERIFY2(endpoint.startsWith(QStringLiteral("127.0.0.1:")), qPrintable(endpoint));
        const quint16 port = endpoint.section(QLatin1Char(':'), 1).toUShort();
        QSignalSpy heartbeats(&server, &MetricServer::heartbeatReceived);
        QSignalSpy accepted(&server, &MetricServer::peerAccepted);

        QString nearlyToken = server.token();
        nearlyToken.back() = nearlyToken.back() == QLatin1Char('0') ? QLatin1Char('1') : QLatin1Char('0');
        for (const QString& wrong : QStringList{nearlyToken, QString(), server.token() + QLatin1Char('0')}) {
            TcpRank impostor(port, wrong);
            QVERIFY(!impostor.nonce.empty());
            const qint64 before = server.rejectedConnections();
            impostor.send(impostor.hello(0), {heartbeat(41)});
            QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), before + 1, 5000);
            QTRY_COMPARE_WITH_TIMEOUT(impostor.socket.state(), QAbstractSocket::UnconnectedState, 5000);
        }
        {
            TcpRank inClear(port, server.token()); // the local socket's hello: the token itself
            inClear.send(hello(0, server.token()) + heartbeat(41));
            QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 4, 5000);
        }
        QCOMPARE(heartbeats.size(), 0);
        QVERIFY(checkedPids.isEmpty());

        TcpRank rank(port, server.token());
        rank.send(rank.hello(0), {heartbeat(42), heartbeat(43)});
        QTRY_COMPARE_WITH_TIMEOUT(heartbeats.size(), 2, 5000);
        QCOMPARE(heartbeats.first().at(1).toLongLong(), 42);
        QCOMPARE(checkedPids, QList<qint64>{0});
        QCOMPARE(accepted.size(), 1);
        QCOMPARE(accepted.first().at(1).toString(), QStringLiteral("TCP from 127.0.0.1"));
        QCOMPARE(server.rejectedConnections(), 4);
        QVERIFY(!rank.sent.contains(server.token().toLatin1()));
    }

    // What an eavesdropper saw cannot be used: the genuine rank's bytes replayed on a new connection (another
    // nonce), a frame repeated on its own connection, or a frame changed under its MAC: each refused, never used.
    void replayedOrChangedTcpFramesAreRefused()
    {
        MetricServer server;
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QVERIFY2(server.listenTcp(QHostAddress(QHostAddress::LocalHost)), qPrintable(server.error()));
        const quint16 port = server.tcpEndpoint().section(QLatin1Char(':'), 1).toUShort();
        QSignalSpy statuses(&server, &MetricServer::statusReceived);
        QSignalSpy heartbeats(&server, &MetricServer::heartbeatReceived);
        const QByteArray completed = frame({{QString::fromLatin1(protocol::kKeyType), QString::fromLatin1(protocol::kTypeStatus)},
                                            {QString::fromLatin1(protocol::kKeyStatus), QString::fromLatin1(protocol::kStatusCompleted)}});
        TcpRank genuine(port, server.token());
        genuine.send(genuine.hello(0), {heartbeat(7), completed});
        QTRY_COMPARE_WITH_TIMEOUT(statuses.size(), 1, 5000);

        TcpRank replay(port, QString()); // holds no token: sends what was seen
        replay.send(genuine.sent);
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 1, 5000);

        const QByteArray repeated = genuine.sent.mid(genuine.sent.lastIndexOf('\n', genuine.sent.size() - 2) + 1);
        genuine.send(repeated); // the status frame again, with its sequence number 2 where 3 is due
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 2, 5000);

        TcpRank changed(port, server.token());
        QByteArray sealed = changed.seal(heartbeat(8));
        sealed.replace("\"step\":8", "\"step\":9");
        changed.send(changed.hello(0) + sealed);
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 3, 5000);
        QCOMPARE(statuses.size(), 1);
        QCOMPARE(heartbeats.size(), 1);
    }

    // A flood from one address takes at most kMaxConnectionsPerPeer slots, is logged a few lines at a time, and a
    // client that trickles a hello it never finishes (slow loris) is dropped at the hello deadline like a silent one;
    // a genuine rank then gets in. Bounded: 200 connections, about 15 s.
    void floodsAndSlowClientsAreBounded()
    {
        MetricServer server;
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QVERIFY2(server.listenTcp(QHostAddress(QHostAddress::LocalHost)), qPrintable(server.error()));
        const quint16 port = server.tcpEndpoint().section(QLatin1Char(':'), 1).toUShort();
        QSignalSpy notices(&server, &MetricServer::notice);
        // One after another (the kernel's listen backlog would otherwise hold some back): 100 connections.
        std::vector<std::unique_ptr<QTcpSocket>> flood;
        for (int i = 0; i < 100; ++i) {
            flood.push_back(std::make_unique<QTcpSocket>());
            flood.back()->connectToHost(QHostAddress(QHostAddress::LocalHost), port);
            QVERIFY(QTest::qWaitFor([&] { return server.openConnections() + server.rejectedConnections() == i + 1; }, 5000));
            QVERIFY(server.openConnections() <= protocol::kMaxConnectionsPerPeer);
        }
        QCOMPARE(server.openConnections(), protocol::kMaxConnectionsPerPeer);
        QCOMPARE(server.rejectedConnections(), 100 - protocol::kMaxConnectionsPerPeer);
        QVERIFY2(notices.size() <= 5, qPrintable(QString::number(notices.size())));
        // The 64 that never say hello are dropped at their deadline, freeing their slots; the log stays short.
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 100, 3 * protocol::kHelloTimeoutMs);
        QCOMPARE(server.openConnections(), 0);
        QVERIFY2(notices.size() <= 7, qPrintable(QString::number(notices.size())));
        flood.clear();
        // A slow loris: one byte of a hello every 500 ms, never a whole line.
        TcpRank loris(port, server.token());
        QElapsedTimer since;
        since.start();
        const qint64 before = server.rejectedConnections();
        while (loris.socket.state() == QAbstractSocket::ConnectedState && since.elapsed() < 3 * protocol::kHelloTimeoutMs) {
            loris.socket.write("{");
            loris.socket.flush();
            QTest::qWait(500);
        }
        QCOMPARE(loris.socket.state(), QAbstractSocket::UnconnectedState);
        QVERIFY2(since.elapsed() < 2 * protocol::kHelloTimeoutMs, qPrintable(QString::number(since.elapsed())));
        QVERIFY(server.rejectedConnections() > before);
        QSignalSpy heartbeats(&server, &MetricServer::heartbeatReceived);
        TcpRank rank(port, server.token());
        rank.send(rank.hello(0), {heartbeat(1)});
        QTRY_COMPARE_WITH_TIMEOUT(heartbeats.size(), 1, 5000);
    }

    void helloMustNameTheConnectingPid()
    {
        MetricServer server;
        server.setPeerCheck([](int, qint64) { return true; });
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QLocalSocket liar;
        liar.connectToServer(server.socketPath());
        QVERIFY(liar.waitForConnected(5000));
        QByteArray forged = hello(0, server.token());
        forged.replace(QByteArray::number(static_cast<qint64>(::getpid())), "1");
        liar.write(forged);
        liar.flush();
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 1, 5000);
    }

    void aChildOfTheRankMaySpeakForIt()
    {
        // A rank's own child process (a data-loader worker, a script's helper) is accepted for that
        // rank; the check walks the kernel's parent chain, not anything the client says.
        MetricServer server;
        const qint64 rankPid = ::getpid(); // this test process plays the rank
        server.setPeerCheck([rankPid](int, qint64 pid) { return proc::isSelfOrDescendant(pid, rankPid); });
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QSignalSpy heartbeats(&server, &MetricServer::heartbeatReceived);
        const QString script = QStringLiteral(R"PY(
import json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
hello = {"v": 1, "type": "hello", "rank": 0, "pid": os.getpid(), "token": sys.argv[2]}
beat = {"v": 1, "type": "heartbeat", "step": 7, "phase": "train"}
s.sendall((json.dumps(hello) + "\n" + json.dumps(beat) + "\n").encode())
s.recv(1)
)PY");
        QProcess child;
        child.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), script, server.socketPath(), server.token()});
        QVERIFY(child.waitForStarted(10000));
        (void)QTest::qWaitFor([&] { return heartbeats.size() == 1; }, 10000);
        QVERIFY2(heartbeats.size() == 1, child.readAllStandardError().constData());
        QCOMPARE(heartbeats.first().at(1).toLongLong(), 7);
        QCOMPARE(server.rejectedConnections(), 0);
        QVERIFY(proc::isSelfOrDescendant(child.processId(), rankPid));
        QVERIFY(!proc::isSelfOrDescendant(rankPid, child.processId())); // and not the other way round
        child.kill();
        child.waitForFinished(5000);
    }

    void connectionsAreCapped()
    {
        // Each connection costs the supervisor a descriptor and a decoder: past the cap, new ones are
        // refused at once (the test needs about twice the cap in descriptors).
        rlimit limit{};
        ::getrlimit(RLIMIT_NOFILE, &limit);
        const rlim_t needed = 2 * protocol::kMaxConnections + 64;
        if (limit.rlim_cur < needed) {
            limit.rlim_cur = std::min<rlim_t>(limit.rlim_max, needed);
            ::setrlimit(RLIMIT_NOFILE, &limit);
        }
        if (limit.rlim_cur < needed) QSKIP("the descriptor limit is too low for this test");
        MetricServer server;
        server.setPeerCheck([](int, qint64) { return true; });
        QVERIFY2(server.listen(), qPrintable(server.error()));
        std::vector<std::unique_ptr<QLocalSocket>> clients;
        for (int i = 0; i < protocol::kMaxConnections; ++i) {
            clients.push_back(std::make_unique<QLocalSocket>());
            clients.back()->connectToServer(server.socketPath());
            QVERIFY(clients.back()->waitForConnected(5000));
            clients.back()->write(hello(1, server.token()));
            clients.back()->flush();
            QCoreApplication::processEvents(); // the server accepts as it goes (its backlog is small)
        }
        QSignalSpy notices(&server, &MetricServer::notice);
        QLocalSocket extra;
        extra.connectToServer(server.socketPath());
        QVERIFY(extra.waitForConnected(5000));
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 1, 10000);
        QVERIFY(notices.last().first().toString().contains(QStringLiteral("%1 connections are already open").arg(protocol::kMaxConnections)));
        QTRY_COMPARE_WITH_TIMEOUT(extra.state(), QLocalSocket::UnconnectedState, 5000);
        // One closes: there is room again.
        clients.pop_back();
        QTest::qWait(200);
        QLocalSocket next;
        next.connectToServer(server.socketPath());
        QVERIFY(next.waitForConnected(5000));
        next.write(hello(1, server.token()) + heartbeat(3));
        next.flush();
        QSignalSpy heartbeats(&server, &MetricServer::heartbeatReceived);
        QTRY_COMPARE_WITH_TIMEOUT(heartbeats.size(), 1, 5000);
        QCOMPARE(server.rejectedConnections(), 1);
    }

    void scalarsFramesAreCheckedValueByValue()
    {
        MetricServer server;
        server.setPeerCheck([](int, qint64) { return true; });
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QSignalSpy received(&server, &MetricServer::scalarsReceived);
        QSignalSpy notices(&server, &MetricServer::notice);
        auto rank = connectedRank(server, 0);
        QVERIFY(rank);
        const QString tooLong(protocol::kMaxScalarNameLength + 1, QLatin1Char('n'));
        const QString longest(protocol::kMaxScalarNameLength, QLatin1Char('m'));
        rank->write(scalars(7, {{QStringLiteral("train/loss"), 0.5},
                                {QStringLiteral("acc"), 1},
                                {longest, -2.5e-300},
                                {QString(), 3},
                                {QStringLiteral("line\nbreak"), 1},
                                {QStringLiteral("bad\u0001name"), 1},
                                {tooLong, 4},
                                {QStringLiteral("text"), QStringLiteral("0.5")},
                                {QStringLiteral("list"), QJsonArray{1}}}));
        rank->flush();
        QTRY_COMPARE_WITH_TIMEOUT(received.size(), 1, 5000);
        const ScalarBatch first = batchOf(received, 0);
        QCOMPARE(first.step, 7);
        QCOMPARE(first.values.size(), 3);
        QCOMPARE(first.values.at(0).name, QStringLiteral("acc"));
        QCOMPARE(first.values.at(0).value, 1.0);
        QCOMPARE(first.values.at(1).name, longest);
        QCOMPARE(first.values.at(1).value, -2.5e-300);
        QCOMPARE(first.values.at(2).name, QStringLiteral("train/loss"));
        QCOMPARE(first.values.at(2).value, 0.5);
        QCOMPARE(server.droppedScalars(), 6);
        QCOMPARE(notices.size(), 1);
        QVERIFY2(notices.first().first().toString().startsWith(QStringLiteral("dropped scalars from rank 0")),
                 qPrintable(notices.first().first().toString()));

        // A frame without a valid step is dropped whole; further drops are counted, not logged again.
        rank->write(scalars(-1, {{QStringLiteral("loss"), 1}}) + scalars(1.5, {{QStringLiteral("loss"), 1}}) +
                    scalars(QJsonValue(), {{QStringLiteral("loss"), 1}}) + scalars(QStringLiteral("8"), {{QStringLiteral("loss"), 1}}) +
                    frame({{QString::fromLatin1(protocol::kKeyType), QString::fromLatin1(protocol::kTypeScalars)},
                           {QString::fromLatin1(protocol::kKeyStep), 8},
                           {QString::fromLatin1(protocol::kKeyValues), QJsonArray{1, 2}}}));
        // Past the per-frame limit, the rest is dropped.
        QJsonObject many;
        for (int i = 0; i < protocol::kMaxScalarsPerFrame + 5; ++i) many.insert(QStringLiteral("m%1").arg(i, 4, 10, QLatin1Char('0')), i);
        rank->write(scalars(9, many));
        rank->flush();
        QTRY_COMPARE_WITH_TIMEOUT(received.size(), 2, 5000);
        QCOMPARE(batchOf(received, 1).step, 9);
        QCOMPARE(batchOf(received, 1).values.size(), protocol::kMaxScalarsPerFrame);
        QCOMPARE(batchOf(received, 1).values.last().name, QStringLiteral("m0255"));
        QCOMPARE(server.droppedScalars(), 6 + 4 + 1 + 5);
        QCOMPARE(notices.size(), 1);
        QCOMPARE(server.rejectedConnections(), 0); // bad values are not a protocol error

        // Only rank 0 reports scalars.
        auto other = connectedRank(server, 1);
        QVERIFY(other);
        other->write(scalars(10, {{QStringLiteral("loss"), 1}}));
        other->flush();
        QTRY_COMPARE_WITH_TIMEOUT(notices.size(), 2, 5000);
        QVERIFY(notices.last().first().toString().contains(QStringLiteral("only rank 0 reports metrics")));
        QCOMPARE(received.size(), 2);
    }

    void thePythonHelperModuleIsHeard()
    {
        // Both sides of the protocol agree: python/ringmaster's hello passes the token and pid checks,
        // and its scalars frame arrives as sent.
        MetricServer server;
        QProcess script;
        qint64 scriptPid = -1; // kept: processId() is 0 once the script has exited, maybe before its hello is read
        server.setPeerCheck([&scriptPid](int rank, qint64 pid) { return rank == 0 && pid == scriptPid; });
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QSignalSpy received(&server, &MetricServer::scalarsReceived);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(RINGMASTER_SOURCE_DIR "/python"));
        env.insert(QStringLiteral("RANK"), QStringLiteral("0"));
        env.insert(QString::fromLatin1(protocol::kSocketEnv), server.socketPath());
        env.insert(QString::fromLatin1(protocol::kTokenEnv), server.token());
        env.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
        script.setProcessEnvironment(env);
        script.start(QStringLiteral("/usr/bin/python3"),
                     {QStringLiteral("-c"), QStringLiteral("import ringmaster; ringmaster.log(2, loss=float(\"nan\")); ringmaster.log(3, loss=0.5, **{'val/acc': 0.25}); "
                                                           "assert ringmaster.flush(10); print(ringmaster.dropped())")});
        QVERIFY(script.waitForStarted(10000));
        scriptPid = script.processId();
        const bool heard = QTest::qWaitFor([&] { return received.size() == 1; }, 20000);
        QVERIFY(script.state() == QProcess::NotRunning || script.waitForFinished(20000));
        QVERIFY2(heard, script.readAllStandardError().constData());
        QCOMPARE(script.exitCode(), 0);
        QCOMPARE(script.readAllStandardOutput().trimmed(), QByteArray("0"));
        const ScalarBatch batch = batchOf(received, 0);
        QCOMPARE(batch.step, 3);
        QCOMPARE(batch.values.size(), 2);
        QCOMPARE(batch.values.at(0).name, QStringLiteral("loss"));
        QCOMPARE(batch.values.at(0).value, 0.5);
        QCOMPARE(batch.values.at(1).name, QStringLiteral("val/acc"));
        QCOMPARE(batch.values.at(1).value, 0.25);
        QCOMPARE(server.rejectedConnections(), 0);
    }

    // The helper module over TCP (a script's rank 0 on another node): heard, and the token is nowhere in what it sent.
    // A relay between the two records every byte the script wrote, as someone on the network would see them.
    void thePythonHelperModuleIsHeardOverTcpWithoutSendingTheToken()
    {
        MetricServer server;
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QVERIFY2(server.listenTcp(QHostAddress(QHostAddress::LocalHost)), qPrintable(server.error()));
        const quint16 port = server.tcpEndpoint().section(QLatin1Char(':'), 1).toUShort();
        QTcpServer relay;
        QVERIFY(relay.listen(QHostAddress(QHostAddress::LocalHost), 0));
        QByteArray seen;
        std::vector<std::unique_ptr<QTcpSocket>> upstreams;
        connect(&relay, &QTcpServer::newConnection, this, [&] {
            QTcpSocket* client = relay.nextPendingConnection();
            upstreams.push_back(std::make_unique<QTcpSocket>());
            QTcpSocket* upstream = upstreams.back().get();
            upstream->connectToHost(QHostAddress(QHostAddress::LocalHost), port);
            connect(client, &QTcpSocket::readyRead, upstream, [client, upstream, &seen] {
                const QByteArray bytes = client->readAll();
                seen += bytes;
                upstream->write(bytes);
            });
            connect(upstream, &QTcpSocket::readyRead, client, [client, upstream] { client->write(upstream->readAll()); });
        });
        QSignalSpy received(&server, &MetricServer::scalarsReceived);
        QProcess script;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PYTHONPATH"), QStringLiteral(RINGMASTER_SOURCE_DIR "/python"));
        env.insert(QStringLiteral("RANK"), QStringLiteral("0"));
        env.remove(QString::fromLatin1(protocol::kSocketEnv));
        env.insert(QString::fromLatin1(protocol::kEndpointEnv), QStringLiteral("127.0.0.1:%1").arg(relay.serverPort()));
        env.insert(QString::fromLatin1(protocol::kTokenEnv), server.token());
        env.insert(QStringLiteral("PYTHONDONTWRITEBYTECODE"), QStringLiteral("1"));
        script.setProcessEnvironment(env);
        script.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral(
            "import ringmaster; ringmaster.log(3, loss=0.5); ringmaster.log(4, loss=0.25); assert ringmaster.flush(10); print(ringmaster.dropped())")});
        QVERIFY(script.waitForStarted(10000));
        const bool heard = QTest::qWaitFor([&] { return received.size() == 2; }, 20000);
        QVERIFY(script.state() == QProcess::NotRunning || script.waitForFinished(20000));
        QVERIFY2(heard, script.readAllStandardError().constData());
        QCOMPARE(batchOf(received, 1).step, 4);
        QCOMPARE(server.rejectedConnections(), 0);
        QVERIFY(seen.contains("\"type\":\"hello\""));
        QVERIFY2(!seen.contains(server.token().toLatin1()), seen.constData());
    }

    // Another local user cannot even reach the socket: it lies in a 0700 directory of this user, so the
    // kernel refuses the connect before any token is read. Needs root (to create and become the user).
    void anotherLocalUserCannotReachTheSocket()
    {
        if (::geteuid() != 0) QSKIP("needs root: creates a second local user and connects as that user");
        const QString useradd = QStandardPaths::findExecutable(QStringLiteral("useradd"), {QStringLiteral("/usr/sbin"), QStringLiteral("/sbin")});
        const QString runuser = QStandardPaths::findExecutable(QStringLiteral("runuser"), {QStringLiteral("/usr/sbin"), QStringLiteral("/sbin")});
        if (useradd.isEmpty() || runuser.isEmpty()) QSKIP("useradd or runuser missing (Debian's passwd and util-linux have them)");
        const QString user = QStringLiteral("rm-intruder");
        if (QProcess::execute(QStringLiteral("id"), {QStringLiteral("-u"), user}) != 0) {
            QCOMPARE(QProcess::execute(useradd, {QStringLiteral("--system"), QStringLiteral("--no-create-home"), user}), 0);
        }
        MetricServer server;
        QVERIFY2(server.listen(), qPrintable(server.error()));
        const QString probe = QStringLiteral(
            "import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
            "try:\n"
            "    s.connect(sys.argv[1])\n"
            "    print('connected')\n"
            "except PermissionError:\n"
            "    print('refused: permission')\n"
            "except OSError as e:\n"
            "    print('refused:', e)\n");
        QProcess intruder;
        intruder.start(runuser, {QStringLiteral("-u"), user, QStringLiteral("--"), QStringLiteral("/usr/bin/python3"), QStringLiteral("-c"), probe,
                                 server.socketPath()});
        QVERIFY(intruder.waitForFinished(30000));
        QCOMPARE(QString::fromUtf8(intruder.readAllStandardOutput()).trimmed(), QStringLiteral("refused: permission"));
        // The same probe as this user connects: the refusal was the permission, not a wrong path.
        QProcess owner;
        owner.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), probe, server.socketPath()});
        QVERIFY(owner.waitForFinished(30000));
        QCOMPARE(QString::fromUtf8(owner.readAllStandardOutput()).trimmed(), QStringLiteral("connected"));
    }

    void silentConnectionIsDroppedAfterTheHelloDeadline()
    {
        MetricServer server;
        QVERIFY2(server.listen(), qPrintable(server.error()));
        QLocalSocket silent;
        silent.connectToServer(server.socketPath());
        QVERIFY(silent.waitForConnected(5000));
        QTest::qWait(protocol::kHelloTimeoutMs / 2);
        QCOMPARE(server.rejectedConnections(), 0); // not before the deadline
        QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), 1, protocol::kHelloTimeoutMs * 2);
        QTRY_COMPARE_WITH_TIMEOUT(silent.state(), QLocalSocket::UnconnectedState, 5000);
    }
};

QTEST_GUILESS_MAIN(TestMetricServer)
#include "tst_metric_server.moc"
