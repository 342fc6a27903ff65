#pragma once
// Rank 0's durable record of a run: metrics.csv (every step), eval.csv and summary.json.
// On resume the CSVs are cut back to the checkpoint's step, so no step appears twice and no row of an
// abandoned timeline (steps past an older checkpoint resumed from) stays mixed with the new one; when
// the checkpoints of such a timeline were moved aside, its full CSVs are kept next to them.
// Every write is checked: a full disk is an IoError naming the file, never a silent gap.

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace ringmaster::trainer {

class RunRecorder
{
public:
    // resumeStep < 0: a fresh run (files truncated); otherwise rows with step > resumeStep are dropped,
    // after the files as they were are copied into abandonedDir when it is not empty.
    RunRecorder(const std::string& runDir, std::int64_t resumeStep, const std::string& abandonedDir = {});
    ~RunRecorder();
    RunRecorder(const RunRecorder&) = delete;
    RunRecorder& operator=(const RunRecorder&) = delete;

    void appendStep(std::int64_t step, std::int64_t epoch, double loss, double lr, double samplesPerSec,
                    double wallTime);
    void appendEval(std::int64_t epoch, std::int64_t step, double valLoss, double valAccuracy);
    void writeSummary(const nlohmann::json& summary);

private:
    struct CsvFile
    {
        std::string path;
        int fd = -1;
    };
    static void append(const CsvFile& file, const char* line, int length);

    std::string m_runDir;
    CsvFile m_metrics;
    CsvFile m_eval;
};

} // namespace ringmaster::trainer
