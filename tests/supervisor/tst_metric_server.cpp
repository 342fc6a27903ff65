// MetricServer on its own: a client that holds the token but is not the rank it claims is rejected
// (the pid comes from the kernel, SO_PEERCRED), a client that never says hello is dropped after the
// hello deadline, and a genuine rank is heard. "scalars" frames are checked value by value, and the
// Python helper module (python/ringmaster) speaks the protocol the server expects.
#include <QCoreApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonArray>
#include <QHostAddress>
#include <QLocalSocket>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QProcess>
#include <QSignalSpy>
#include <QTest>

#include <memory>
#include <vector>

#include <sys/resource.h>
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

    // The TCP endpoint (a rank on another Slurm node): the token admits, a wrong one (even one differing
    // only in its last character) or none is rejected and nothing it sent is used; the kernel cannot
    // name a TCP peer's pid, so the peer check is asked with pid 0.
    void tcpEndpointTakesTheTokenOnly()
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
            QTcpSocket impostor;
            impostor.connectToHost(QHostAddress(QHostAddress::LocalHost), port);
            QVERIFY(impostor.waitForConnected(5000));
            const qint64 before = server.rejectedConnections();
            impostor.write(hello(0, wrong) + heartbeat(41));
            impostor.flush();
            QTRY_COMPARE_WITH_TIMEOUT(server.rejectedConnections(), before + 1, 5000);
            QTRY_COMPARE_WITH_TIMEOUT(impostor.state(), QAbstractSocket::UnconnectedState, 5000);
        }
        QCOMPARE(heartbeats.size(), 0);
        QVERIFY(checkedPids.isEmpty());

        QTcpSocket rank;
        rank.connectToHost(QHostAddress(QHostAddress::LocalHost), port);
        QVERIFY(rank.waitForConnected(5000));
        rank.write(hello(0, server.token()) + heartbeat(42));
        rank.flush();
        QTRY_COMPARE_WITH_TIMEOUT(heartbeats.size(), 1, 5000);
        QCOMPARE(heartbeats.first().at(1).toLongLong(), 42);
        QCOMPARE(checkedPids, QList<qint64>{0});
        QCOMPARE(accepted.size(), 1);
        QCOMPARE(accepted.first().at(1).toString(), QStringLiteral("TCP from 127.0.0.1"));
        QCOMPARE(server.rejectedConnections(), 3);
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
