#pragma once
// The best checkpoint by a validation metric (--keep-best val_loss:min), kept the way Lightning's
// ModelCheckpoint(monitor=...) keeps it, and never deleted by the rotation of --keep-checkpoints (the most-asked
// fix in checkpoint rotation: transformers#37196). When an evaluation improves on the best so far, that step gets a
// checkpoint if it has none yet; checkpoints/best.pt (a hard link to it, else a copy) and checkpoints/best.json
// ({"metric", "mode", "step", "value", "checkpoint"}) say which it is, and summary.json names it. best.json carries
// the best across resumes: a resume from before the best's step forgets it, as that best belongs to the abandoned
// timeline (its best.pt and best.json move aside with that timeline's checkpoints), and a fresh start forgets it
// too. Only rank 0 keeps it; every file is replaced atomically.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace ringmaster::trainer {

struct KeepBestRule
{
    std::string metric; // val_loss | val_accuracy
    bool minimize = true;
};

// "auto" (val_loss:min when the run has validation data, else none), "none", or METRIC[:min|max], METRIC being
// val_loss (min unless said) or val_accuracy (max unless said). Throws UsageError naming --keep-best.
std::optional<KeepBestRule> parseKeepBest(const std::string& text, bool hasValidation);

class BestCheckpoint
{
public:
    BestCheckpoint(std::optional<KeepBestRule> rule, std::string runDir);

    bool enabled() const { return m_rule.has_value(); }
    // After the run's timeline is settled at resumeStep (-1: a fresh start): the best that best.json records when
    // it is on this timeline (its step at most resumeStep, the same rule, its checkpoint still there), else none.
    // When the timeline that best belonged to was set aside into abandonedDir (abandonCheckpointsAfter), best.pt and
    // best.json move there with it; otherwise they stay until a new best replaces them.
    void restore(std::int64_t resumeStep, const std::string& abandonedDir);
    // The value of the rule's metric in an evaluation's result.
    double valueOf(double valLoss, double valAccuracy) const;
    // Whether value beats the best so far (a value that is not a finite number never does).
    bool improves(double value) const;
    // The checkpoint of step is the best now, with value: best.pt and best.json are replaced.
    void record(std::int64_t step, double value, const std::string& checkpointPath);
    // The best's step, or -1: the checkpoint rotation keeps it.
    std::int64_t step() const { return m_step; }
    // {"metric", "mode", "step", "value", "path" (best.pt), "checkpoint"} for summary.json, or null.
    nlohmann::json summary() const;

private:
    std::optional<KeepBestRule> m_rule;
    std::string m_runDir;
    std::int64_t m_step = -1;
    double m_value = 0.0;
    std::string m_checkpoint; // the step's file name in checkpoints/
};

} // namespace ringmaster::trainer
