#pragma once
// One data-parallel rank: rendezvous, identical start (broadcast from rank 0), sharded and reshuffled
// data, bucketed gradient all-reduce, all-rank mean loss, evaluation over the whole test split,
// atomic checkpoints and exact resume, graceful stop. Side effects happen on rank 0 only.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <torch/torch.h>

#include "trainer/config.h"
#include "trainer/data/training_data.h"
#include "trainer/dist_env.h"
#include "trainer/loss.h"
#include "trainer/lr_schedule.h"
#include "trainer/mixed_precision.h"
#include "trainer/models.h"
#include "trainer/step_timing.h"

namespace ringmaster::trainer {

class Communicator;
class GradientSynchronizer;
class Reporter;
class RunRecorder;
class TensorBoardWriter;
class BestCheckpoint;
class ScriptedModel;
enum class Phase;

// The whole program: parses argv, runs, returns the exit code (core/protocol/exit_codes.h: 0 ok or
// stopped, 1 failed, 2 bad input, 3 rendezvous port taken).
int trainerMain(int argc, char** argv);

struct EvalResult
{
    double loss = 0.0;
    double accuracy = 0.0; // NaN for regression
};

class Trainer
{
public:
    Trainer(TrainerConfig config, DistEnv env);
    ~Trainer();
    Trainer(const Trainer&) = delete;
    Trainer& operator=(const Trainer&) = delete;

    // Returns the exit code; failures are recorded in summary.json (status failed) before rethrowing.
    int run();

private:
    enum class Outcome { Completed, Stopped };

    void setUp();
    // --model FILE: the same model (parameter names and shapes) on every rank.
    void requireSameModelOnEveryRank();
    // DDP's broadcast_buffers: rank 0's batch-norm statistics on every rank (no-op without buffers).
    void syncBuffers();
    void restoreFromCheckpoint();
    Outcome trainLoop();
    // Returns true when all ranks agreed to stop after this step.
    bool trainStep(const torch::Tensor& batchIndices, std::int64_t epoch);
    // Loss and accuracy over the whole validation set, across ranks; kept in m_lastEval. No-op without one.
    void evaluate(std::int64_t epoch);
    void saveCheckpoint(std::int64_t epoch, std::int64_t batchInEpoch);
    // After an evaluation at this step: when it is the best so far (--keep-best), this step's checkpoint (written
    // now unless it exists) becomes the best one (rank 0; best_checkpoint.h).
    void keepIfBest(std::int64_t epoch, std::int64_t batchInEpoch);
    void placeData();
    void finish(Outcome outcome);
    void writeSummary(const std::string& status, const std::string& message);
    torch::Tensor batchInputs(const DataSplit& split, const torch::Tensor& indices) const;
    // RUN_DIR/classes.json: index -> name, when the data names its classes (rank 0).
    void writeClassNames() const;
    double elapsedSeconds() const;
    // Publishes the step and phase that the heartbeat timer reports.
    void setPhase(Phase phase);
    bool isLeader() const { return m_env.rank == 0; }

    TrainerConfig m_config;
    DistEnv m_env;
    torch::Device m_device = torch::kCPU;
    bool m_channelsLast = false;
    TrainingData m_data;
    LossKind m_loss = LossKind::CrossEntropy;
    std::shared_ptr<Model> m_model;
    std::shared_ptr<ScriptedModel> m_scripted; // the same model when --model is a TorchScript file
    bool m_hasBuffers = false;
    std::unique_ptr<torch::optim::Optimizer> m_optimizer;
    Precision m_precision = Precision::Fp32;
    std::unique_ptr<LossScaler> m_scaler;   // fp16's; disabled for fp32 and bf16
    std::unique_ptr<Communicator> m_communicator;
    std::unique_ptr<GradientSynchronizer> m_gradients;
    std::unique_ptr<Reporter> m_reporter;
    std::unique_ptr<RunRecorder> m_recorder;
    std::unique_ptr<TensorBoardWriter> m_tensorboard; // rank 0's live event file, RUN_DIR/tb/
    std::unique_ptr<BestCheckpoint> m_best;           // rank 0's

    std::string m_resumePath;
    std::string m_startNotes; // warnings for the user, sent with the "running" status (a skipped checkpoint)
    std::int64_t m_step = 0;
    std::int64_t m_startEpoch = 0;
    std::int64_t m_startBatch = 0;
    std::int64_t m_stepsPerEpoch = 0;
    std::int64_t m_totalSteps = 0;
    LrSchedule m_schedule;
    double m_wallTimeOffset = 0.0;
    std::chrono::steady_clock::time_point m_started;
    double m_trainSeconds = 0.0;
    std::int64_t m_trainSamples = 0;
    StepTimer m_stepTimer;                      // where each step's time goes, for the heartbeats
    std::chrono::milliseconds m_testSlowdown{0}; // step_timing.h's test hook
    double m_lastLoss = 0.0;
    std::int64_t m_lastEvalStep = -1;
    EvalResult m_lastEval{};
    std::int64_t m_lastCheckpointStep = -1;
    std::string m_lastCheckpointPath; // the file of m_lastCheckpointStep (rank 0)
};

} // namespace ringmaster::trainer
