// MetricServer on its own: a client that holds the token but is not the rank it claims is rejected
// (the pid comes from the kernel, SO_PEERCRED), a client that never says hello is dropped after the
// hello deadline, and a genuine rank is heard.
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include <unistd.h>

#include "../../core/protocol/wire.h"
#include "metric_server.h"
#include "proc_info.h"

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
        QTest::qWaitFor([&] { return heartbeats.size() == 1; }, 10000);
        QVERIFY2(heartbeats.size() == 1, child.readAllStandardError().constData());
        QCOMPARE(heartbeats.first().at(1).toLongLong(), 7);
        QCOMPARE(server.rejectedConnections(), 0);
        QVERIFY(proc::isSelfOrDescendant(child.processId(), rankPid));
        QVERIFY(!proc::isSelfOrDescendant(rankPid, child.processId())); // and not the other way round
        child.kill();
        child.waitForFinished(5000);
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
