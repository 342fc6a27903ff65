// TensorBoardFollower: event files read as they grow (a record split across writes is used once, when whole),
// files that appear later and in subfolders, and damaged records (skipped, or the rest of the file abandoned).
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>

#include "protocol/tensorboard_records.h"
#include "supervisor/tensorboard_follower.h"

namespace tb = ringmaster::protocol::tensorboard;
using ringmaster::supervisor::TensorBoardFollower;

namespace {

QByteArray record(qint64 step, const char* tag, float value, double wallTime = 1000.0)
{
    const std::string bytes = tb::frameRecord(tb::encodeScalarEvent(wallTime, step, tag, value));
    return QByteArray(bytes.data(), static_cast<int>(bytes.size()));
}

QByteArray fileVersion()
{
    const std::string bytes = tb::frameRecord(tb::encodeFileVersionEvent(999.0));
    return QByteArray(bytes.data(), static_cast<int>(bytes.size()));
}

void append(const QString& path, const QByteArray& bytes)
{
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Append));
    QCOMPARE(file.write(bytes), bytes.size());
}

// "step tag value" of every scalar signal so far.
QStringList seen(const QSignalSpy& spy)
{
    QStringList lines;
    for (const auto& args : spy) {
        lines.append(QStringLiteral("%1 %2 %3").arg(args.at(0).toLongLong()).arg(args.at(1).toString()).arg(args.at(2).toDouble()));
    }
    return lines;
}

} // namespace

class TestTensorBoardFollower : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void recordAppendedInPiecesIsReadOnceWhole()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("events.out.tfevents.1.host.1"));
        TensorBoardFollower follower(dir.path());
        QSignalSpy scalars(&follower, &TensorBoardFollower::scalar);
        QSignalSpy warnings(&follower, &TensorBoardFollower::warning);

        const QByteArray second = record(2, "train/loss", 0.5f, 1002.0);
        append(path, fileVersion() + record(1, "train/loss", 0.75f, 1001.0) + second.left(second.size() / 2));
        follower.pollNow();
        QCOMPARE(seen(scalars), QStringList{QStringLiteral("1 train/loss 0.75")});
        QCOMPARE(scalars.at(0).at(3).toDouble(), 1001.0);
        follower.pollNow(); // nothing new: nothing emitted, the half record still waits
        QCOMPARE(scalars.size(), 1);

        append(path, second.mid(second.size() / 2, 3)); // still not whole
        follower.pollNow();
        QCOMPARE(scalars.size(), 1);
        append(path, second.mid(second.size() / 2 + 3) + record(3, "train/lr", 0.125f));
        follower.pollNow();
        follower.pollNow();
        QCOMPARE(seen(scalars), (QStringList{QStringLiteral("1 train/loss 0.75"), QStringLiteral("2 train/loss 0.5"),
                                             QStringLiteral("3 train/lr 0.125")}));
        QCOMPARE(scalars.at(1).at(3).toDouble(), 1002.0);
        QVERIFY(warnings.isEmpty());
    }

    void fileAppearingLaterInASubfolderIsPickedUp()
    {
        QTemporaryDir dir;
        TensorBoardFollower follower(dir.filePath(QStringLiteral("tb")), nullptr, 20);
        QSignalSpy scalars(&follower, &TensorBoardFollower::scalar);
        follower.start(); // the folder does not exist yet: no error, nothing read
        append(dir.filePath(QStringLiteral("tb/events.out.tfevents.1.host.1")), fileVersion() + record(1, "a", 1.0f));
        QTRY_COMPARE_WITH_TIMEOUT(scalars.size(), 1, 10000);
        // Not an event file by name: never read, even if it holds records.
        append(dir.filePath(QStringLiteral("tb/notes.txt")), record(7, "ignored", 7.0f));
        append(dir.filePath(QStringLiteral("tb/run2/deeper/events.out.tfevents.2.host.2")), fileVersion() + record(5, "b", 2.0f));
        QTRY_COMPARE_WITH_TIMEOUT(scalars.size(), 2, 10000);
        append(dir.filePath(QStringLiteral("tb/events.out.tfevents.1.host.1")), record(2, "a", 3.0f));
        QTRY_COMPARE_WITH_TIMEOUT(scalars.size(), 3, 10000);
        follower.stop();
        follower.pollNow();
        QCOMPARE(seen(scalars), (QStringList{QStringLiteral("1 a 1"), QStringLiteral("5 b 2"), QStringLiteral("2 a 3")}));
    }

    // A shared folder (lightning_logs/): what earlier runs left there is never read, even when it grows; files that
    // appear after skipFilesPresentNow(), beside them or in a new subfolder, are.
    void filesPresentBeforeTheRunAreSkipped()
    {
        QTemporaryDir dir;
        const QString old0 = dir.filePath(QStringLiteral("version_0/events.out.tfevents.1.host.1"));
        const QString old1 = dir.filePath(QStringLiteral("version_1/events.out.tfevents.2.host.2"));
        append(old0, fileVersion() + record(1, "train_loss", 9.0f));
        append(old1, fileVersion() + record(1, "train_loss", 8.0f));
        TensorBoardFollower follower(dir.path());
        QSignalSpy scalars(&follower, &TensorBoardFollower::scalar);
        QCOMPARE(follower.skipFilesPresentNow(), 2);
        follower.start();
        follower.stop();
        append(old1, record(2, "train_loss", 7.0f));
        append(dir.filePath(QStringLiteral("version_2/events.out.tfevents.3.host.3")), fileVersion() + record(1, "train_loss", 0.5f));
        append(dir.filePath(QStringLiteral("version_1/events.out.tfevents.4.host.4")), fileVersion() + record(3, "train_loss", 0.25f));
        follower.pollNow();
        QCOMPARE(seen(scalars), (QStringList{QStringLiteral("3 train_loss 0.25"), QStringLiteral("1 train_loss 0.5")}));
    }

    // The timer's polls walk the folder and read the files off this thread (issue 22, item 8): while a poll takes
    // 1.5 s (the test delay), this thread's timers keep firing, the poll's scalars arrive when it ends, a poll
    // that is due meanwhile does not start a second one, and pollNow() takes the pending result first, in order.
    void pollsRunOffTheCallersThread()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("events.out.tfevents.1.host.1"));
        append(path, fileVersion() + record(1, "loss", 1.0f));
        TensorBoardFollower::setPollDelayForTests(1500);
        TensorBoardFollower follower(dir.path(), nullptr, 50);
        QSignalSpy scalars(&follower, &TensorBoardFollower::scalar);
        QElapsedTimer clock;
        clock.start();
        follower.pollInBackground();
        QVERIFY(clock.elapsed() < 500);
        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
        ticker.start(100);
        QTRY_COMPARE_WITH_TIMEOUT(scalars.size(), 1, 10000);
        QVERIFY2(ticks >= 5, qPrintable(QString::number(ticks)));
        append(path, record(2, "loss", 0.5f));
        follower.pollInBackground();
        follower.pollInBackground(); // one at a time: this one is a no-op
        follower.pollNow();          // waits for the pending one, applies it, then polls itself
        TensorBoardFollower::setPollDelayForTests(0);
        QCOMPARE(seen(scalars), (QStringList{QStringLiteral("1 loss 1"), QStringLiteral("2 loss 0.5")}));
        QTest::qWait(200); // the pending poll's finished signal, now delivered, must change nothing
        QCOMPARE(scalars.size(), 2);
    }

    void recordWithBadDataChecksumIsSkippedWithOneWarning()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("events.out.tfevents.1.host.1"));
        TensorBoardFollower follower(dir.path());
        QSignalSpy scalars(&follower, &TensorBoardFollower::scalar);
        QSignalSpy warnings(&follower, &TensorBoardFollower::warning);
        QByteArray bad = record(2, "x", 2.0f);
        bad[static_cast<int>(tb::kRecordHeaderBytes) + 3] ^= 0x20; // inside the data
        append(path, record(1, "x", 1.0f) + bad + record(3, "x", 3.0f));
        follower.pollNow();
        QCOMPARE(seen(scalars), (QStringList{QStringLiteral("1 x 1"), QStringLiteral("3 x 3")}));
        QCOMPARE(warnings.size(), 1);
        QVERIFY(warnings.at(0).at(0).toString().contains(path));
        QVERIFY(warnings.at(0).at(0).toString().contains(QStringLiteral("data checksum")));

        QByteArray badAgain = record(4, "x", 4.0f);
        badAgain[badAgain.size() - 1] ^= 0x01; // the data checksum itself
        append(path, badAgain + record(5, "x", 5.0f));
        follower.pollNow();
        QCOMPARE(seen(scalars).last(), QStringLiteral("5 x 5"));
        QCOMPARE(scalars.size(), 3);
        QCOMPARE(warnings.size(), 1); // one warning per file
    }

    void badLengthChecksumAbandonsTheRestOfThatFileOnly()
    {
        QTemporaryDir dir;
        const QString damaged = dir.filePath(QStringLiteral("events.out.tfevents.1.host.1"));
        const QString healthy = dir.filePath(QStringLiteral("events.out.tfevents.2.host.2"));
        TensorBoardFollower follower(dir.path());
        QSignalSpy scalars(&follower, &TensorBoardFollower::scalar);
        QSignalSpy warnings(&follower, &TensorBoardFollower::warning);
        QByteArray bad = record(2, "x", 2.0f);
        bad[0] ^= 0x01; // the length
        append(damaged, record(1, "x", 1.0f) + bad + record(3, "x", 3.0f));
        append(healthy, record(10, "y", 10.0f));
        follower.pollNow();
        QCOMPARE(seen(scalars), (QStringList{QStringLiteral("1 x 1"), QStringLiteral("10 y 10")}));
        QCOMPARE(warnings.size(), 1);
        QVERIFY(warnings.at(0).at(0).toString().contains(QStringLiteral("length checksum")));

        append(damaged, record(4, "x", 4.0f));
        append(healthy, record(11, "y", 11.0f));
        follower.pollNow();
        QCOMPARE(seen(scalars), (QStringList{QStringLiteral("1 x 1"), QStringLiteral("10 y 10"), QStringLiteral("11 y 11")}));
        QCOMPARE(warnings.size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestTensorBoardFollower)
#include "tst_tensorboard_follower.moc"
