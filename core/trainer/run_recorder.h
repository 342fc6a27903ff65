#pragma once
// Rank 0's durable record of a run: metrics.csv (every step), eval.csv and summary.json.
// On resume the CSVs are cut back to the checkpoint's step, so no step appears twice.

#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

namespace ringmaster::trainer {

inline constexpr const char* kMetricsHeader = "step,epoch,loss,lr,samples_per_sec,wall_time";
inline constexpr const char* kEvalHeader = "epoch,step,val_loss,val_accuracy";

class RunRecorder
{
public:
    // resumeStep < 0: a fresh run (files truncated); otherwise rows with step > resumeStep are dropped.
    RunRecorder(const std::string& runDir, std::int64_t resumeStep);
    ~RunRecorder();
    RunRecorder(const RunRecorder&) = delete;
    RunRecorder& operator=(const RunRecorder&) = delete;

    void appendStep(std::int64_t step, std::int64_t epoch, double loss, double lr, double samplesPerSec,
                    double wallTime);
    void appendEval(std::int64_t epoch, std::int64_t step, double valLoss, double valAccuracy);
    void writeSummary(const nlohmann::json& summary);

private:
    std::string m_runDir;
    std::FILE* m_metrics = nullptr;
    std::FILE* m_eval = nullptr;
};

} // namespace ringmaster::trainer
