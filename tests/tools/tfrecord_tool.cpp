// Writes and reads TensorBoard event files with Ringmaster's own code, for tests/trainer/test_tensorboard_records.py:
//   ringmaster-tfrecord-tool write FILE       the trainer's writer: loss, lr, samples_per_sec at steps 1-3, val_loss and val_accuracy at step 3
//   ringmaster-tfrecord-tool write-run DIR    the same into DIR/tb/events.out.tfevents.*, prints the file's path
//   ringmaster-tfrecord-tool read FILE        decodes every record (protocol/tensorboard_records.h) and prints
//     JSON lines: {"kind":"file_version",...}, {"kind":"scalar","wall_time","step","tag","value"} and a last
//     {"kind":"scan","size","consumed","framing_lost","bad_data_records","undecodable_records","oversized_records"}
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/tensorboard_records.h"
#include "trainer/tensorboard_writer.h"

namespace tb = ringmaster::protocol::tensorboard;
using ringmaster::trainer::TensorBoardWriter;

namespace {

// The values the pytest expects, recomputed there.
constexpr int kSteps = 3;
constexpr double kWallTimeBase = 1.7e9;

void writeSample(TensorBoardWriter& writer)
{
    using namespace ringmaster::trainer;
    namespace column = ringmaster::protocol::column;
    for (int step = 1; step <= kSteps; ++step) {
        writer.writeScalars(step,
                            {{column::kLoss, 1.0 / step}, {column::kLr, 0.1 * step}, {column::kSamplesPerSec, 1000.0 + step}},
                            kWallTimeBase + step + 0.25);
    }
    writer.writeScalars(kSteps, {{column::kValLoss, 0.5}, {column::kValAccuracy, 0.875}}, kWallTimeBase + kSteps + 0.5);
}

void print(const nlohmann::json& line)
{
    std::printf("%s\n", line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

int read(const char* path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "error: cannot open %s\n", path);
        return 2;
    }
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const tb::ScanResult scan = tb::scanEvents(bytes, [](const tb::Event& event) {
        if (!event.fileVersion.empty()) {
            print({{"kind", "file_version"}, {"wall_time", event.wallTime}, {"file_version", event.fileVersion}});
        }
        for (const auto& scalar : event.scalars) {
            print({{"kind", "scalar"}, {"wall_time", event.wallTime}, {"step", event.step}, {"tag", scalar.tag},
                   {"value", scalar.value}});
        }
    });
    print({{"kind", "scan"}, {"size", bytes.size()}, {"consumed", scan.consumed}, {"framing_lost", scan.framingLost},
           {"bad_data_records", scan.badDataRecords}, {"undecodable_records", scan.undecodableRecords},
           {"oversized_records", scan.oversizedRecords}});
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    const std::string command = argc == 3 ? argv[1] : "";
    if (command == "read") return read(argv[2]);
    if (command == "write") {
        TensorBoardWriter writer(argv[2]);
        writeSample(writer);
        return writer.enabled() ? 0 : 1;
    }
    if (command == "write-run") {
        const auto writer = TensorBoardWriter::forRunDir(argv[2]);
        writeSample(*writer);
        std::printf("%s\n", writer->path().c_str());
        return writer->enabled() ? 0 : 1;
    }
    std::fprintf(stderr, "usage: %s write FILE | write-run RUN_DIR | read FILE\n", argv[0]);
    return 2;
}
