// Fuzz target: TensorBoard event files (core/protocol/tensorboard_records.h, the TFRecord framing and the
// protobuf Event subset) and their follower (core/supervisor/tensorboard_follower.h). The input is used three
// ways: as a file's bytes for scanEvents (checksums and all); as one record's data for decodeEvent directly and
// framed with valid checksums (frameRecord), so that mutations reach the protobuf decoder past the CRCs; and as
// an events.out.tfevents.* file in a scratch folder that grows in chunks while a TensorBoardFollower polls it.
// Must hold: scanning never reads outside the bytes and consumes at most all of them; a framed record always
// frames back to itself (Complete, its data exactly); decodeEvent gives the same answer raw and framed; the
// follower, fed the file in pieces, reports exactly the scalars one scan of the whole file finds, in order;
// no crash, no undefined behaviour, no leak, memory bounded (a length field is never an allocation size).
#include <QFile>
#include <QString>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "protocol/tensorboard_records.h"
#include "fuzz_support.h"
#include "supervisor/tensorboard_follower.h"

namespace tb = ringmaster::protocol::tensorboard;
namespace fuzz = ringmaster::fuzz;
using ringmaster::supervisor::TensorBoardFollower;

namespace {

using Seen = std::tuple<std::int64_t, std::string, double, double>; // step, tag, value, wall time

bool sameValue(double a, double b) { return a == b || (a != a && b != b); } // NaN equals NaN here

bool sameSeen(const std::vector<Seen>& a, const std::vector<Seen>& b)
{
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::get<0>(a[i]) != std::get<0>(b[i]) || std::get<1>(a[i]) != std::get<1>(b[i]) ||
            !sameValue(std::get<2>(a[i]), std::get<2>(b[i])) || !sameValue(std::get<3>(a[i]), std::get<3>(b[i]))) {
            return false;
        }
    }
    return true;
}

std::vector<Seen> scanAll(std::string_view bytes, tb::ScanResult* result)
{
    std::vector<Seen> seen;
    *result = tb::scanEvents(bytes, [&](const tb::Event& event) {
        for (const auto& value : event.scalars) seen.emplace_back(event.step, value.tag, value.value, event.wallTime);
    });
    return seen;
}

void checkFramed(std::string_view data)
{
    const auto raw = tb::decodeEvent(data);
    const std::string record = tb::frameRecord(data);
    const tb::RecordRead read = tb::readRecord(record);
    FUZZ_CHECK(read.status == tb::RecordStatus::Complete);
    FUZZ_CHECK(read.recordBytes == record.size());
    FUZZ_CHECK(read.data == data);
    tb::ScanResult scan;
    const auto seen = scanAll(record, &scan);
    FUZZ_CHECK(scan.consumed == record.size() && !scan.framingLost);
    FUZZ_CHECK(scan.undecodableRecords == (raw ? 0u : 1u));
    std::size_t scalars = 0;
    if (raw) scalars = raw->scalars.size();
    FUZZ_CHECK(seen.size() == scalars);
}

void followInPieces(std::string_view bytes, const std::vector<Seen>& expected)
{
    const std::string folder = fuzz::freshScratchFolder("tensorboard");
    const QString path = QString::fromStdString(folder + "/sub/events.out.tfevents.1700000000.host.1");
    fuzz::writeScratchFile("tensorboard/sub/events.out.tfevents.1700000000.host.1", std::string_view());
    TensorBoardFollower follower(QString::fromStdString(folder), nullptr, 1000000);
    std::vector<Seen> seen;
    QObject::connect(&follower, &TensorBoardFollower::scalar, &follower,
                     [&](qint64 step, const QString& tag, double value, double wallTime) {
                         seen.emplace_back(step, tag.toStdString(), value, wallTime);
                     });
    QFile file(path);
    FUZZ_CHECK(file.open(QIODevice::Append));
    // The file grows in 1 to 7 pieces (as many as the input's length decides; records cut anywhere), polled
    // after each.
    const std::size_t pieces = 1 + bytes.size() % 7;
    const std::size_t piece = std::max<std::size_t>(1, (bytes.size() + pieces - 1) / pieces);
    for (std::size_t at = 0; at < bytes.size(); at += piece) {
        const auto chunk = bytes.substr(at, piece);
        FUZZ_CHECK(file.write(chunk.data(), static_cast<qint64>(chunk.size())) == static_cast<qint64>(chunk.size()));
        FUZZ_CHECK(file.flush());
        follower.pollNow();
    }
    follower.pollNow();
    // Tags are compared as the follower hands them on (through QString, so invalid UTF-8 is replaced alike).
    std::vector<Seen> expectedAsQt;
    for (const auto& [step, tag, value, wallTime] : expected) {
        expectedAsQt.emplace_back(step, QString::fromStdString(tag).toStdString(), value, wallTime);
    }
    FUZZ_CHECK(sameSeen(seen, expectedAsQt));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view bytes = fuzz::asText(data, size);
    tb::ScanResult whole;
    const auto expected = scanAll(bytes, &whole);
    FUZZ_CHECK(whole.consumed <= bytes.size());
    checkFramed(bytes);
    followInPieces(bytes, expected);
    return 0;
}
