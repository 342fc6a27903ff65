#include "trainer/best_checkpoint.h"

#include <cerrno>
#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "protocol/run_layout.h"
#include "trainer/atomic_file.h"
#include "trainer/errors.h"
#include "trainer/log.h"

namespace fs = std::filesystem;

namespace ringmaster::trainer {
namespace {

constexpr const char* kValLoss = "val_loss";
constexpr const char* kValAccuracy = "val_accuracy";

fs::path checkpointsOf(const std::string& runDir)
{
    return fs::path(runDir) / protocol::kCheckpointsFolder;
}

// dst := a hard link to src (the same bytes, no second copy), else a copy; replaced atomically either way.
void linkOrCopy(const fs::path& src, const fs::path& dst)
{
    const std::string temp = AtomicFile::tempPathFor(dst.string());
    std::error_code error;
    fs::remove(temp, error);
    if (::link(src.c_str(), temp.c_str()) == 0) {
        fs::rename(temp, dst, error);
        if (!error) return;
        fs::remove(temp, error);
        throw IoError(dst.string(), "replace", error.value());
    }
    writeFileAtomically(dst.string(), readFileWhole(src.string())); // a file system without hard links
}

} // namespace

std::optional<KeepBestRule> parseKeepBest(const std::string& text, bool hasValidation)
{
    if (text == "none") return std::nullopt;
    if (text == "auto") return hasValidation ? std::optional<KeepBestRule>(KeepBestRule{kValLoss, true}) : std::nullopt;
    const auto colon = text.find(':');
    KeepBestRule rule;
    rule.metric = text.substr(0, colon);
    if (rule.metric != kValLoss && rule.metric != kValAccuracy) {
        throw UsageError("--keep-best: unknown metric '" + rule.metric + "'; give val_loss or val_accuracy, optionally "
                         "with :min or :max (e.g. val_loss:min), or none");
    }
    rule.minimize = rule.metric == kValLoss;
    if (colon != std::string::npos) {
        const std::string mode = text.substr(colon + 1);
        if (mode != "min" && mode != "max") {
            throw UsageError("--keep-best " + text + ": the part after ':' must be min or max");
        }
        rule.minimize = mode == "min";
    }
    return rule;
}

BestCheckpoint::BestCheckpoint(std::optional<KeepBestRule> rule, std::string runDir)
    : m_rule(std::move(rule)), m_runDir(std::move(runDir))
{
}

void BestCheckpoint::restore(std::int64_t resumeStep, const std::string& abandonedDir)
{
    const fs::path dir = checkpointsOf(m_runDir);
    const fs::path record = dir / protocol::kBestRecordFile;
    m_step = -1;
    std::error_code error;
    if (!fs::is_regular_file(record, error)) return;
    std::int64_t step = -1;
    try {
        const auto saved = nlohmann::json::parse(readFileWhole(record.string()));
        step = saved.at("step").get<std::int64_t>();
        const auto checkpoint = saved.at("checkpoint").get<std::string>();
        const bool sameRule = m_rule && saved.at("metric").get<std::string>() == m_rule->metric &&
                              saved.at("mode").get<std::string>() == (m_rule->minimize ? "min" : "max");
        if (sameRule && resumeStep >= 0 && step <= resumeStep && checkpoint.find('/') == std::string::npos &&
            fs::is_regular_file(dir / checkpoint, error)) {
            m_step = step;
            m_value = saved.at("value").get<double>();
            m_checkpoint = checkpoint;
            log::info("best checkpoint so far: step {} ({} {})", m_step, m_rule->metric, m_value);
            return;
        }
    } catch (const std::exception& e) { // a damaged record: the best is chosen afresh, it never stops the run
        log::warn("{}: {}; the best checkpoint is chosen afresh", record.string(), e.what());
    }
    // The best of a timeline that was set aside (a fresh start, or a resume from before the best's step) goes with
    // it; otherwise (another rule, --keep-best none) best.pt stays as it was until a new best replaces it.
    if (abandonedDir.empty() || (resumeStep >= 0 && step >= 0 && step <= resumeStep)) return;
    for (const char* name : {protocol::kBestCheckpointFile, protocol::kBestRecordFile}) {
        if (!fs::exists(dir / name, error)) continue;
        fs::rename(dir / name, fs::path(abandonedDir) / name, error);
        if (error) throw IoError((dir / name).string(), "move aside with the abandoned timeline", error.value());
    }
}

double BestCheckpoint::valueOf(double valLoss, double valAccuracy) const
{
    return m_rule && m_rule->metric == kValAccuracy ? valAccuracy : valLoss;
}

bool BestCheckpoint::improves(double value) const
{
    if (!m_rule || !std::isfinite(value)) return false;
    if (m_step < 0) return true;
    return m_rule->minimize ? value < m_value : value > m_value;
}

void BestCheckpoint::record(std::int64_t step, double value, const std::string& checkpointPath)
{
    if (!m_rule) return;
    const fs::path dir = checkpointsOf(m_runDir);
    linkOrCopy(checkpointPath, dir / protocol::kBestCheckpointFile);
    m_step = step;
    m_value = value;
    m_checkpoint = fs::path(checkpointPath).filename().string();
    nlohmann::json record = summary();
    record.erase("path");
    writeFileAtomically((dir / protocol::kBestRecordFile).string(), record.dump(2) + "\n");
    log::info("best checkpoint step={} {}={:.6f} path={}", step, m_rule->metric, value, (dir / protocol::kBestCheckpointFile).string());
}

nlohmann::json BestCheckpoint::summary() const
{
    if (!m_rule || m_step < 0) return nullptr;
    return {{"metric", m_rule->metric},
            {"mode", m_rule->minimize ? "min" : "max"},
            {"step", m_step},
            {"value", m_value},
            {"path", (checkpointsOf(m_runDir) / protocol::kBestCheckpointFile).string()},
            {"checkpoint", m_checkpoint}};
}

} // namespace ringmaster::trainer
