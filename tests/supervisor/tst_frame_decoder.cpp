// FrameDecoder: newline framing, split reads, the size limit and malformed input.
#include <QTest>

#include "supervisor/frame_decoder.h"

using ringmaster::supervisor::FrameDecoder;

class TestFrameDecoder : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void framesAcrossReads()
    {
        FrameDecoder decoder(1024);
        QVERIFY(decoder.feed(QByteArrayLiteral("{\"a\":1}\n{\"b\"")).size() == 1);
        const auto frames = decoder.feed(QByteArrayLiteral(":2}\n{\"c\":3}\n"));
        QCOMPARE(frames.size(), 2);
        QCOMPARE(frames.at(0).value(QStringLiteral("b")).toInt(), 2);
        QCOMPARE(frames.at(1).value(QStringLiteral("c")).toInt(), 3);
        QVERIFY(!decoder.failed());
    }

    void oversizedFrameFails()
    {
        FrameDecoder decoder(64);
        QVERIFY(decoder.feed(QByteArray(65, 'x')).isEmpty());
        QVERIFY(decoder.failed());
        QVERIFY(decoder.error().contains(QStringLiteral("64-byte limit")));
        QVERIFY(decoder.feed(QByteArrayLiteral("{\"a\":1}\n")).isEmpty()); // nothing after an error
    }

    void frameAtTheLimitPasses()
    {
        FrameDecoder decoder(10);
        QCOMPARE(decoder.feed(QByteArrayLiteral("{\"a\":12}\n")).size(), 1); // 9 bytes with the newline
        FrameDecoder tight(8);
        QVERIFY(tight.feed(QByteArrayLiteral("{\"a\":12}\n")).isEmpty());
        QVERIFY(tight.failed());
    }

    void frameOfExactlyTheLimitPassesOneMoreFails()
    {
        const QByteArray frame = QByteArrayLiteral("{\"a\":12}\n"); // 9 bytes with the newline
        FrameDecoder exact(9);
        QCOMPARE(exact.feed(frame).size(), 1);
        QVERIFY(!exact.failed());
        // The same frame in two reads: 8 bytes pending are still within the limit.
        FrameDecoder split(9);
        QVERIFY(split.feed(frame.left(8)).isEmpty());
        QVERIFY(!split.failed());
        QCOMPARE(split.feed(frame.mid(8)).size(), 1);
        // 9 bytes and still no newline: with its newline the frame would be 10, so it fails now,
        // holding no more than the limit in memory.
        FrameDecoder over(9);
        QVERIFY(over.feed(QByteArrayLiteral("{\"a\":123}")).isEmpty());
        QVERIFY(over.failed());
        FrameDecoder overOneRead(9);
        QVERIFY(overOneRead.feed(QByteArrayLiteral("{\"a\":123}\n")).isEmpty());
        QVERIFY(overOneRead.error().contains(QStringLiteral("10 bytes")));
    }

    void malformedFails()
    {
        FrameDecoder decoder(1024);
        QVERIFY(decoder.feed(QByteArrayLiteral("not json\n")).isEmpty());
        QVERIFY(decoder.failed());
        FrameDecoder array(1024);
        QVERIFY(array.feed(QByteArrayLiteral("[1,2]\n")).isEmpty());
        QVERIFY(array.error().contains(QStringLiteral("not a JSON object")));
    }
};

QTEST_GUILESS_MAIN(TestFrameDecoder)
#include "tst_frame_decoder.moc"
