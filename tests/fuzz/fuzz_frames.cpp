// Fuzz target: the reporting socket's byte stream (core/protocol/wire.h). Feeds arbitrary bytes, cut into
// chunks as reads would cut them (the first byte seeds the chunk sizes), to FrameDecoder
// (core/supervisor/frame_decoder.h) at the protocol's limit and at a small one, and every frame it decodes to
// readReportFrame (core/supervisor/report_frame.h), as MetricServer does for a connection.
// Must hold: how the bytes are chunked changes nothing (the same frames, and an error or none, as one whole
// read); no frame comes after an error; a frame's fields are what the protocol allows: a kind that matches
// its type, an integer field (version, rank, pid, step, epoch) either the number sent or absent (its fallback),
// a hello's rank -1 or non-negative, a "scalars" frame's kept values at most kMaxScalarsPerFrame,
// each finite and named by 1 to kMaxScalarNameLength characters without control characters, at a step that
// is a non-negative integer, and a drop count of zero exactly when no reason is given. No crash, no
// undefined behaviour (a number such as 1e300 where an integer belongs included), no leak.
#include <QByteArray>
#include <QChar>
#include <QJsonObject>
#include <QList>

#include <cmath>
#include <cstdint>

#include "protocol/wire.h"
#include "supervisor/frame_decoder.h"
#include "fuzz_support.h"
#include "supervisor/report_frame.h"

using namespace ringmaster::supervisor;
namespace protocol = ringmaster::protocol;

namespace {

struct Decoded
{
    QList<QJsonObject> frames;
    bool failed = false;
};

Decoded decodeWhole(const QByteArray& bytes, int limit)
{
    FrameDecoder decoder(limit);
    Decoded out;
    out.frames = decoder.feed(bytes);
    out.failed = decoder.failed();
    return out;
}

Decoded decodeChunked(const QByteArray& bytes, int limit, std::uint32_t seed)
{
    FrameDecoder decoder(limit);
    Decoded out;
    qsizetype at = 0;
    std::uint32_t state = seed * 2654435761u + 1;
    while (at < bytes.size()) {
        state = state * 1103515245u + 12345u;
        const qsizetype chunk = 1 + static_cast<qsizetype>((state >> 16) % 97); // 1..97 bytes per read
        const bool wasFailed = decoder.failed();
        const auto frames = decoder.feed(bytes.mid(at, chunk));
        FUZZ_CHECK(!wasFailed || frames.isEmpty()); // nothing is decoded after an error
        out.frames += frames;
        at += chunk;
    }
    out.failed = decoder.failed();
    return out;
}

void checkFrame(const QJsonObject& object)
{
    const ReportFrame frame = readReportFrame(object);
    using Kind = ReportFrame::Kind;
    FUZZ_CHECK((frame.kind == Kind::Other) == (frame.type != QLatin1String(protocol::kTypeHello) &&
                                                 frame.type != QLatin1String(protocol::kTypeStep) &&
                                                 frame.type != QLatin1String(protocol::kTypeEval) &&
                                                 frame.type != QLatin1String(protocol::kTypeCheckpoint) &&
                                                 frame.type != QLatin1String(protocol::kTypeStatus) &&
                                                 frame.type != QLatin1String(protocol::kTypeHeartbeat) &&
                                                 frame.type != QLatin1String(protocol::kTypeScalars)));
    FUZZ_CHECK(frame.rank >= -1);
    // An integer field reads as the number sent, or as absent (its fallback): never as something else.
    const auto sent = [&](const char* key) { return object.value(QLatin1String(key)).toDouble(std::nan("")); };
    FUZZ_CHECK(frame.version == -1 || double(frame.version) == sent(protocol::kKeyVersion));
    FUZZ_CHECK(frame.rank == -1 || double(frame.rank) == sent(protocol::kKeyRank));
    FUZZ_CHECK(frame.pid == 0 || double(frame.pid) == sent(protocol::kKeyPid));
    FUZZ_CHECK(frame.step.step == 0 || double(frame.step.step) == sent(protocol::kKeyStep));
    FUZZ_CHECK(frame.step.epoch == 0 || double(frame.step.epoch) == sent(protocol::kKeyEpoch));
    FUZZ_CHECK(frame.eval.step == 0 || double(frame.eval.step) == sent(protocol::kKeyStep));
    FUZZ_CHECK(frame.heartbeatStep == 0 || double(frame.heartbeatStep) == sent(protocol::kKeyStep));
    FUZZ_CHECK(frame.checkpointStep == 0 || double(frame.checkpointStep) == sent(protocol::kKeyStep));
    FUZZ_CHECK(frame.droppedScalars >= 0);
    FUZZ_CHECK((frame.droppedScalars == 0) == frame.scalarsProblem.isEmpty());
    FUZZ_CHECK(frame.scalars.values.size() <= protocol::kMaxScalarsPerFrame);
    if (!frame.scalars.values.isEmpty()) {
        FUZZ_CHECK(frame.kind == Kind::Scalars);
        FUZZ_CHECK(frame.scalars.step >= 0);
    }
    for (const Scalar& scalar : frame.scalars.values) {
        FUZZ_CHECK(std::isfinite(scalar.value));
        FUZZ_CHECK(!scalar.name.isEmpty() && scalar.name.size() <= protocol::kMaxScalarNameLength);
        for (const QChar c : scalar.name) FUZZ_CHECK(c.category() != QChar::Other_Control);
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size == 0) return 0;
    const std::uint32_t seed = data[0];
    const QByteArray bytes(reinterpret_cast<const char*>(data) + 1, static_cast<qsizetype>(size - 1));
    for (const int limit : {protocol::kMaxFrameBytes, 64}) {
        const Decoded whole = decodeWhole(bytes, limit);
        const Decoded chunked = decodeChunked(bytes, limit, seed);
        FUZZ_CHECK(whole.failed == chunked.failed);
        FUZZ_CHECK(whole.frames == chunked.frames);
        if (limit == protocol::kMaxFrameBytes) {
            for (const QJsonObject& frame : whole.frames) checkFrame(frame);
        }
    }
    return 0;
}
