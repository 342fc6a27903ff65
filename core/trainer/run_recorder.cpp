#include "run_recorder.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "checkpoint.h"

namespace fs = std::filesystem;

namespace ringmaster::trainer {
namespace {

// Keeps the header and the rows whose step column is <= lastStep.
void truncateCsv(const std::string& path, const char* header, int stepColumn, std::int64_t lastStep)
{
    std::ifstream in(path);
    std::ostringstream kept;
    kept << header << '\n';
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
        if (first) {
            first = false;
            continue;
        }
        std::istringstream fields(line);
        std::string field;
        for (int column = 0; column <= stepColumn && std::getline(fields, field, ','); ++column) {}
        try {
            if (std::stoll(field) <= lastStep) kept << line << '\n';
        } catch (const std::exception&) {
            // A torn last line from a crash: drop it.
        }
    }
    writeFileAtomically(path, kept.str());
}

std::FILE* openCsv(const std::string& path, const char* header, int stepColumn, std::int64_t resumeStep)
{
    if (resumeStep >= 0 && fs::exists(path)) {
        truncateCsv(path, header, stepColumn, resumeStep);
    } else {
        writeFileAtomically(path, std::string(header) + "\n");
    }
    std::FILE* file = std::fopen(path.c_str(), "a");
    if (!file) throw std::runtime_error("cannot open " + path + " for writing");
    return file;
}

} // namespace

RunRecorder::RunRecorder(const std::string& runDir, std::int64_t resumeStep)
    : m_runDir(runDir)
{
    fs::create_directories(runDir);
    m_metrics = openCsv((fs::path(runDir) / "metrics.csv").string(), kMetricsHeader, 0, resumeStep);
    m_eval = openCsv((fs::path(runDir) / "eval.csv").string(), kEvalHeader, 1, resumeStep);
}

RunRecorder::~RunRecorder()
{
    if (m_metrics) std::fclose(m_metrics);
    if (m_eval) std::fclose(m_eval);
}

void RunRecorder::appendStep(std::int64_t step, std::int64_t epoch, double loss, double lr, double samplesPerSec,
                             double wallTime)
{
    std::fprintf(m_metrics, "%lld,%lld,%.9g,%.9g,%.6g,%.6f\n", static_cast<long long>(step),
                 static_cast<long long>(epoch), loss, lr, samplesPerSec, wallTime);
    std::fflush(m_metrics); // the durable record: a crash loses at most the step in flight
}

void RunRecorder::appendEval(std::int64_t epoch, std::int64_t step, double valLoss, double valAccuracy)
{
    std::fprintf(m_eval, "%lld,%lld,%.9g,%.9g\n", static_cast<long long>(epoch), static_cast<long long>(step),
                 valLoss, valAccuracy);
    std::fflush(m_eval);
}

void RunRecorder::writeSummary(const nlohmann::json& summary)
{
    writeFileAtomically((fs::path(m_runDir) / "summary.json").string(), summary.dump(2) + "\n");
}

} // namespace ringmaster::trainer
