// Fuzz target: a run's CSV files as ringmaster-runs and the Runs tab read them (core/runs/csv_table.h: damage
// tolerated and described, quoted fields), and metrics.csv's use by the checkpoint list
// (core/runs/checkpoint_list.h). Writes arbitrary bytes as RUN_DIR/metrics.csv in a scratch folder beside two
// (empty) checkpoints, reads the table, parses every field as a number and an integer, and lists the checkpoints.
// Must hold: the reader never fails, it leaves damaged rows out and says so: every kept row has the header's
// width and a 1-based line number, increasing; each problem names the file; the checkpoint list has both
// checkpoints in step order whatever metrics.csv holds, their epoch/loss taken from rows at or before their
// step; no crash, no undefined behaviour, no leak.
#include <QString>

#include <cstdint>
#include <string>

#include "runs/checkpoint_list.h"
#include "runs/csv_table.h"
#include "fuzz_support.h"

using namespace ringmaster::runs;
namespace fuzz = ringmaster::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string runDir = fuzz::freshScratchFolder("run");
    const std::string path = fuzz::writeScratchFile("run/metrics.csv", fuzz::asText(data, size));
    fuzz::writeScratchFile("run/checkpoints/step-00000005.pt", std::string_view());
    fuzz::writeScratchFile("run/checkpoints/step-00000020.pt", std::string_view());

    const CsvTable table = readCsvTable(QString::fromStdString(path), QStringLiteral("metrics.csv"));
    FUZZ_CHECK(table.exists);
    FUZZ_CHECK(table.rows.size() == table.rowLines.size());
    int lastLine = 1;
    for (int i = 0; i < table.rows.size(); ++i) {
        FUZZ_CHECK(table.rows.at(i).size() == table.header.size());
        FUZZ_CHECK(table.rowLines.at(i) > lastLine);
        lastLine = table.rowLines.at(i);
        for (const QByteArray& field : table.rows.at(i)) {
            (void)parseCsvNumber(field);
            (void)parseCsvInteger(field);
        }
    }
    for (const QString& problem : table.problems) FUZZ_CHECK(problem.startsWith(QStringLiteral("metrics.csv")));

    const QList<CheckpointInfo> checkpoints = listRunCheckpoints(QString::fromStdString(runDir));
    FUZZ_CHECK(checkpoints.size() == 2);
    FUZZ_CHECK(checkpoints.at(0).step == 5 && checkpoints.at(1).step == 20);
    for (const CheckpointInfo& info : checkpoints) {
        if (info.metricsStep) FUZZ_CHECK(*info.metricsStep <= info.step);
        else FUZZ_CHECK(!info.epoch && !info.loss);
    }
    return 0;
}
