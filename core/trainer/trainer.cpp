#include "trainer/trainer.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <thread>

#include <torch/version.h>
#include <unistd.h>

#include "protocol/run_layout.h"
#include "protocol/wire.h"
#include "trainer/allocator_tuning.h"
#include "trainer/atomic_file.h"
#include "trainer/best_checkpoint.h"
#include "trainer/checkpoint.h"
#include "trainer/communicator.h"
#include "trainer/compat.h"
#include "trainer/device_setup.h"
#include "trainer/errors.h"
#include "trainer/foreach_sgd.h"
#include "trainer/grad_sync.h"
#include "trainer/hash64.h"
#include "trainer/log.h"
#include "trainer/lr_schedule.h"
#include "trainer/job_setup.h"
#include "trainer/models/scripted_model.h"
#include "trainer/preflight_checks.h"
#include "protocol/safe_files.h"
#include "trainer/reporter.h"
#include "trainer/run_recorder.h"
#include "trainer/sampler.h"
#include "trainer/stop_signal.h"
#include "trainer/tensorboard_timeline.h"
#include "trainer/tensorboard_writer.h"
#include "trainer/version_info.h"
#include "trainer/watchdog.h"

namespace fs = std::filesystem;

namespace ringmaster::trainer {
namespace {

constexpr double kBytesPerMb = 1024.0 * 1024.0;
constexpr std::int64_t kSharedValues = 2; // the loss and the stop flag every rank sums each step (trainStep)
constexpr double kStallMarginSec = 30.0; // heartbeats stop this long after the longest bounded wait
// How long past --rendezvous-timeout a rank waits for a rendezvous that neither completed nor failed.
constexpr std::chrono::milliseconds kRendezvousGrace{15000};

// FNV-1a over every parameter's and buffer's bytes: equal digests mean bit-identical replicas. The
// built-in models have no buffers, so their digests are those of their parameters.
std::uint64_t parameterDigest(torch::nn::Module& module)
{
    std::uint64_t hash = hash64::kFnvOffset;
    auto tensors = module.parameters();
    for (const auto& buffer : module.buffers()) tensors.push_back(buffer);
    for (const auto& param : tensors) {
        const auto bytes = param.detach().cpu().contiguous();
        hash = hash64::fnv1a(bytes.data_ptr(), static_cast<std::size_t>(bytes.nbytes()), hash);
    }
    return hash;
}

namespace wire = ringmaster::protocol;

std::unique_ptr<torch::optim::Optimizer> makeOptimizer(const TrainerConfig& c, const std::vector<torch::Tensor>& params)
{
    if (c.optimizer == "adam") {
        return std::make_unique<torch::optim::Adam>(params, torch::optim::AdamOptions(c.lr).weight_decay(c.weightDecay));
    }
    if (c.optimizer == "adamw") {
        return std::make_unique<torch::optim::AdamW>(params, torch::optim::AdamWOptions(c.lr).weight_decay(c.weightDecay));
    }
    const auto options = torch::optim::SGDOptions(c.lr).momentum(c.momentum).weight_decay(c.weightDecay);
    // Multi-tensor SGD where it saves launches, as PyTorch picks foreach by default only when every parameter is
    // on CUDA. On a CPU it gives the same numbers but ran 3-5% slower at 1 rank (cnn, 7 interleaved rounds):
    // LibTorch 1.13's CPU foreach kernels loop over the tensors through the dispatcher once more.
    const bool onCuda = !params.empty() && std::all_of(params.begin(), params.end(), [](const torch::Tensor& p) {
        return p.is_cuda();
    });
    if (onCuda) return std::make_unique<ForeachSgd>(params, options);
    return std::make_unique<torch::optim::SGD>(params, options);
}

void setLearningRate(torch::optim::Optimizer& optimizer, double lr)
{
    for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

} // namespace

int trainerMain(int argc, char** argv)
{
    TrainerConfig config;
    DistEnv env;
    try {
        if (!parseTrainerArgs(argc, argv, config)) return kExitOk;
        if (config.validateOnly) {
            // Warnings (e.g. an unwritable data cache) go to stderr: stdout is "ok" or the probe's JSON.
            log::toStderr(log::Level::warn); // only what needs attention: the answer is one line
            runValidateOnly(config);
            return kExitOk;
        }
        env = readDistEnv();
    } catch (const UsageError& e) {
        std::fprintf(stderr, "ringmaster-trainer: error: %s\n", e.what());
        return kExitUsage;
    } catch (const std::exception& e) {
        // Whatever a check missed (a LibTorch error while --validate-only reads the data, say) is one line and
        // exit 1, never std::terminate.
        std::fprintf(stderr, "ringmaster-trainer: error: %s\n", oneLineMessage(e).c_str());
        return kExitFailure;
    }
    // Before any thread starts (the reporter's, the watchdogs'): setenv beside a getenv is not safe.
    setCudaEnvironment(config.deterministic);
    log::toRankStreams(env.rank);
    if (!env.derivedFromSlurm.empty()) log::info("rendezvous from Slurm's environment: {}", env.derivedFromSlurm);
    installStopHandlers();
    try {
        Trainer trainer(config, env);
        return trainer.run();
    } catch (const UsageError& e) {
        log::error("{}", e.what());
        return kExitUsage;
    } catch (const AddressInUseError& e) {
        log::error("{}", e.what());
        return kExitAddressInUse;
    } catch (const std::exception& e) {
        log::debug("{}", e.what()); // LibTorch's C++ stack frames, for whoever turns on debug
        log::error("{}", oneLineMessage(e));
        return kExitFailure;
    }
}

Trainer::Trainer(TrainerConfig config, DistEnv env)
    : m_config(std::move(config))
    , m_env(std::move(env))
{
}

Trainer::~Trainer() = default;

void Trainer::setPhase(Phase phase)
{
    if (m_reporter) m_reporter->setProgress(m_step, phase);
}

double Trainer::elapsedSeconds() const
{
    return m_wallTimeOffset + std::chrono::duration<double>(std::chrono::steady_clock::now() - m_started).count();
}

int Trainer::run()
{
    m_started = std::chrono::steady_clock::now();
    m_reporter = Reporter::fromEnvironment(m_env.rank);
    if (m_reporter) {
        // Every wait in the loop is bounded by these timeouts: longer without progress is a hang.
        const double boundSec = std::max(m_config.rendezvousTimeoutSec, m_config.collectiveTimeoutSec) + kStallMarginSec;
        m_reporter->setStallLimit(std::chrono::milliseconds(static_cast<std::int64_t>(boundSec * 1000)));
    }
    try {
        setUp();
        if (keepStepMemoryInTheHeap()) log::debug("malloc: step memory kept in the heap for reuse (allocator_tuning.h)");
        finish(trainLoop());
        m_communicator->barrier();
        m_communicator->close(/*clean=*/true);
        return kExitOk;
    } catch (const std::exception& e) {
        const std::string message = oneLineMessage(e);
        if (m_communicator) m_communicator->close(/*clean=*/false);
        if (isLeader() && m_recorder) {
            try {
                writeSummary(wire::kStatusFailed, message);
            } catch (const std::exception& summaryError) {
                // Most likely the same full disk: one error line is enough, the details go to debug.
                log::warn("summary.json does not record this failure: it could not be written either");
                log::debug("{}", oneLineMessage(summaryError));
            }
        }
        if (m_reporter) {
            m_reporter->send({{wire::kKeyType, wire::kTypeStatus}, {wire::kKeyStatus, wire::kStatusFailed},
                              {wire::kKeyMessage, message}});
        }
        throw;
    }
}

void Trainer::setUp()
{
    setPhase(Phase::Loading);
    // A run directory from someone else may hold a link that would redirect the run's writes (safe_files.h).
    if (const std::string link = protocol::symlinkProblem(m_config.out); !link.empty()) throw UsageError(link);
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int threads = m_config.threads > 0 ? m_config.threads : std::max(1, cores / std::max(1, m_env.localWorldSize));
    at::set_num_threads(threads);

    if (m_config.device == "cuda") {
        const bool benchmark = m_config.cudnnBenchmark && !m_config.deterministic;
        setCudaMathSwitches(m_config.tf32, benchmark);
        log::info("cuda math: TF32 {}, cuDNN benchmark {}", m_config.tf32 ? "on" : "off", benchmark ? "on" : "off");
    }
    if (m_config.deterministic) {
        useDeterministicAlgorithms();
        log::info("deterministic kernels only (cuDNN without benchmarking, cuBLAS's fixed workspace)");
    }
    std::string deviceNote;
    m_device = selectDevice(m_config.device, m_env, &deviceNote);
    if (!deviceNote.empty()) log::info("device {}: {}", m_device.str(), deviceNote);
    if (m_device.is_cuda()) m_stepTimer = StepTimer([device = m_device] { waitForDeviceStream(device); });
    m_testSlowdown = testSlowdownFor(m_env.rank);
    const std::string backend = !m_config.backend.empty() ? m_config.backend : (m_config.device == "cuda" ? "nccl" : "gloo");
    m_config.backend = backend;

    torch::manual_seed(m_config.seed);
    PreparedData prepared = prepareData(m_config);
    m_data = std::move(prepared.data);
    m_loss = prepared.loss;
    placeData();
    const auto shardSize = requireBatchFitsShard(m_config, m_data.train.size(), m_env.worldSize);
    m_stepsPerEpoch = (shardSize + m_config.batchSize - 1) / m_config.batchSize;
    m_totalSteps = m_stepsPerEpoch * m_config.epochs;
    if (m_config.maxSteps > 0) m_totalSteps = std::min(m_totalSteps, m_config.maxSteps);
    m_schedule = LrSchedule{m_config.lrSchedule, m_config.lr, m_config.warmupSteps,
                            m_config.lrStepSize > 0 ? m_config.lrStepSize : m_stepsPerEpoch, m_config.lrGamma, m_totalSteps};

    {
        PreparedModel model = prepareModel(m_config, {m_data, m_loss}, m_device, m_config.batchSize);
        m_model = std::move(model.model);
        m_scripted = std::move(model.scripted);
    }
    m_hasBuffers = !m_model->buffers().empty();
    m_model->to(m_device);
    m_optimizer = makeOptimizer(m_config, m_model->parameters());
    m_precision = parsePrecision(m_config.precision);
    m_scaler = std::make_unique<LossScaler>(
        m_precision == Precision::Fp16,
        LossScalerOptions{m_config.lossScale, 2.0, 0.5, m_config.lossScaleGrowthInterval});
    if (!m_config.resume.empty()) restoreFromCheckpoint();

    setPhase(Phase::Rendezvous);
    CommunicatorOptions options;
    options.backend = backend;
    options.forceGroup = m_config.forceCollectives;
    options.device = m_device;
    options.rendezvousTimeout = std::chrono::milliseconds(static_cast<std::int64_t>(m_config.rendezvousTimeoutSec * 1000));
    options.collectiveTimeout = std::chrono::milliseconds(static_cast<std::int64_t>(m_config.collectiveTimeoutSec * 1000));
    {
        // The store enforces --rendezvous-timeout only while it waits for ranks to arrive, not while a
        // client waits for a reply: a listener on MASTER_PORT that is not rank 0's store would hold
        // this rank forever. Past the timeout plus a grace period, the rank exits instead.
        const auto limit = options.rendezvousTimeout + kRendezvousGrace;
        const Watchdog watchdog(limit,
                                "rendezvous at " + m_env.masterAddr + ":" + std::to_string(m_env.masterPort) +
                                    " got no answer within " + std::to_string(limit.count() / 1000) + " s (rank " +
                                    std::to_string(m_env.rank) + " of " + std::to_string(m_env.worldSize) +
                                    "): is MASTER_PORT held by a program that is not rank 0?",
                                kExitFailure);
        m_communicator = std::make_unique<Communicator>(m_env, options);
    }
    m_communicator->connect();
    if (m_scripted) requireSameModelOnEveryRank();
    m_communicator->broadcastFromRankZero(*m_model);
    // A user's model may view() its input, which a channels-last tensor refuses: default layout for it.
    m_channelsLast = !m_device.is_cuda() && !m_scripted;
    if (m_channelsLast) preferChannelsLast(*m_model);
    m_gradients = std::make_unique<GradientSynchronizer>(
        m_model->parameters(), m_model->named_parameters().keys(), *m_communicator,
        GradSyncOptions{static_cast<std::size_t>(m_config.bucketMb * kBytesPerMb), m_config.localAllreduce == "shm",
                        m_config.findUnusedParameters, options.collectiveTimeout, kSharedValues});

    log::info("rank {}/{} pid {} joined: local rank {}, {} training samples per epoch on this rank", m_env.rank,
                 m_env.worldSize, static_cast<long>(::getpid()), m_env.localRank, shardSize);
    if (isLeader()) {
        // Every rank has loaded its checkpoint once the group exists: later checkpoints may move now.
        // One timeline per run directory: a fresh run, or a resume from a checkpoint outside this
        // run's checkpoints/ (an abandoned one), sets every existing checkpoint aside; a resume from
        // one of them sets aside only the later ones.
        const bool ownCheckpoint = !m_resumePath.empty() && isInCheckpointFolder(m_config.out, m_resumePath);
        const std::string abandoned = abandonCheckpointsAfter(m_config.out, ownCheckpoint ? m_step : -1);
        if (!abandoned.empty()) {
            log::info("{} at step {}: the checkpoints and metrics of the abandoned timeline in {} moved to {}",
                         m_resumePath.empty() ? "started" : "resumed", m_step, m_config.out, abandoned);
        }
        m_recorder = std::make_unique<RunRecorder>(m_config.out, m_resumePath.empty() ? -1 : m_step, abandoned);
        settleTensorBoardTimeline(m_config.out, m_resumePath.empty() ? -1 : m_step, abandoned);
        m_best = std::make_unique<BestCheckpoint>(parseKeepBest(m_config.keepBest, m_data.val.size() > 0), m_config.out);
        m_best->restore(ownCheckpoint ? m_step : -1, abandoned);
        if (ownCheckpoint) m_lastCheckpointPath = m_resumePath;
        m_tensorboard = TensorBoardWriter::forRunDir(m_config.out);
        writeClassNames();
        log::info("run {}: model {} on {}, {} rank(s) x batch {} ({} global), backend {}, device {}, {} thread(s)/rank, "
                     "{} gradient bucket(s) over {}, {} steps/epoch, {} steps in all",
                     m_config.out, m_config.model, m_data.description, m_env.worldSize, m_config.batchSize,
                     m_config.batchSize * m_env.worldSize, backend, m_device.str(), threads,
                     std::max<std::size_t>(m_gradients->bucketCount(), 1), m_gradients->transport(), m_stepsPerEpoch,
                     m_totalSteps);
        if (m_reporter) {
            m_reporter->send({{wire::kKeyType, wire::kTypeStatus}, {wire::kKeyStatus, wire::kStatusRunning},
                              {wire::kKeyTotalSteps, m_totalSteps}, {wire::kKeyStepsPerEpoch, m_stepsPerEpoch},
                              {wire::kKeyResumedFromStep, m_step}, {wire::kKeyMessage, m_startNotes}});
        }
    }
}

void Trainer::placeData()
{
    // On a GPU the compact data (uint8 images) lives there when it fits (--data-placement auto: at most a
    // quarter of the free memory), so no batch crosses PCIe; otherwise batches stream from host memory.
    bool resident = true;
    if (m_device.is_cuda()) {
        const auto bytes = m_data.compactBytes();
        const auto free = freeDeviceMemory(m_device);
        resident = m_config.dataPlacement == "device" || (m_config.dataPlacement == "auto" && bytes <= free / 4);
        log::info("data: {:.1f} MB {}", static_cast<double>(bytes) / kBytesPerMb,
                  resident ? "on " + m_device.str()
                           : std::string("in host memory; each batch goes to the GPU pinned and without blocking"));
    }
    m_data.placeOn(m_device, resident);
}

void Trainer::requireSameModelOnEveryRank()
{
    const auto mine = modelSignature(*m_model);
    const bool differs = m_communicator->shareString("model-signature", mine) != mine;
    auto mismatches = torch::tensor({differs ? 1.0f : 0.0f}, torch::TensorOptions().device(m_device));
    m_communicator->allreduceSum(mismatches);
    if (mismatches.cpu().item<float>() > 0.0f) {
        throw UsageError("--model " + m_config.model + ": the ranks loaded different models (parameter names or shapes " +
                         (differs ? "on this rank differ from rank 0's" : "on another rank differ from rank 0's") +
                         "); give every rank the same TorchScript file");
    }
}

void Trainer::syncBuffers()
{
    if (m_hasBuffers) m_communicator->broadcastBuffersFromRankZero(*m_model);
}

void Trainer::restoreFromCheckpoint()
{
    std::vector<std::string> skipped;
    m_resumePath = resolveCheckpoint(m_config.resume, &skipped);
    for (const auto& damage : skipped) {
        log::warn("{}: skipped; resuming from {}", damage, m_resumePath);
        m_startNotes += (m_startNotes.empty() ? "" : "; ") + damage + ": skipped; resuming from " + m_resumePath;
    }
    const auto header = readCheckpointHeader(m_resumePath);
    requireCheckpointFits(header, m_config, m_resumePath);
    loadCheckpointState(m_resumePath, *m_model, *m_optimizer, m_device);
    if (header.precision != m_config.precision) {
        log::warn("resuming a checkpoint trained with --precision {} with --precision {}", header.precision,
                  m_config.precision);
    }
    m_scaler->restore(header.lossScaler);
    const auto& p = header.position;
    m_step = p.step;
    m_startEpoch = p.epoch;
    m_startBatch = p.batchInEpoch;
    m_wallTimeOffset = p.wallTime;
    m_lastCheckpointStep = p.step;
    if (p.worldSize != m_env.worldSize || p.batchSize != m_config.batchSize) {
        // The sampler position is in batches of the old shape: convert it through samples seen.
        const auto samplesSeen = p.batchInEpoch * p.batchSize * p.worldSize;
        m_startBatch = samplesSeen / (m_config.batchSize * m_env.worldSize);
        log::warn("resuming with {} rank(s) x batch {} from a checkpoint of {} x {}: the epoch continues at batch {}, "
                     "not bit-exact", m_env.worldSize, m_config.batchSize, p.worldSize, p.batchSize, m_startBatch);
    }
    if (p.seed != m_config.seed) {
        log::warn("resuming with --seed {} but the checkpoint used {}: keeping the checkpoint's seed", m_config.seed, p.seed);
        m_config.seed = p.seed;
    }
    log::info("resumed from {} at step {} (epoch {}, batch {})", m_resumePath, m_step, m_startEpoch, m_startBatch);
}

Trainer::Outcome Trainer::trainLoop()
{
    DistributedSampler sampler(m_data.train.size(), m_env.worldSize, m_env.rank, true, m_config.seed, m_config.dropLast);
    for (std::int64_t epoch = m_startEpoch; epoch < m_config.epochs && m_step < m_totalSteps; ++epoch) {
        sampler.setEpoch(epoch);
        const auto indices = sampler.indices().to(m_data.dataDevice());
        const std::int64_t first = epoch == m_startEpoch ? m_startBatch : 0;
        for (std::int64_t batch = first; batch < m_stepsPerEpoch && m_step < m_totalSteps; ++batch) {
            const auto begin = batch * m_config.batchSize;
            const auto rows = std::min(m_config.batchSize, sampler.numSamples() - begin);
            const bool stop = trainStep(indices.narrow(0, begin, rows), epoch);
            const bool epochDone = batch + 1 == m_stepsPerEpoch;
            const auto nextEpoch = epochDone ? epoch + 1 : epoch;
            const auto nextBatch = epochDone ? 0 : batch + 1;
            if (stop) {
                saveCheckpoint(nextEpoch, nextBatch);
                return Outcome::Stopped;
            }
            const bool asked = isLeader() && takeCheckpointRequest();
            if (asked || (m_config.checkpointEvery > 0 && m_step % m_config.checkpointEvery == 0)) {
                saveCheckpoint(nextEpoch, nextBatch);
            }
        }
        if (m_step >= m_totalSteps && m_stepsPerEpoch * (epoch + 1) != m_step) break; // stopped mid-epoch by --max-steps
        if (m_config.evalEvery > 0 && (epoch + 1) % m_config.evalEvery == 0) {
            evaluate(epoch);
            keepIfBest(epoch + 1, 0);
        }
        if (m_config.checkpointEvery == 0) saveCheckpoint(epoch + 1, 0);
    }
    return Outcome::Completed;
}

torch::Tensor Trainer::batchInputs(const DataSplit& split, const torch::Tensor& indices) const
{
    auto inputs = m_data.inputsAt(split, indices);
    return m_channelsLast && inputs.dim() == 4 ? inputs.contiguous(torch::MemoryFormat::ChannelsLast) : inputs;
}

bool Trainer::trainStep(const torch::Tensor& batchIndices, std::int64_t epoch)
{
    const auto stepStart = std::chrono::steady_clock::now();
    const bool timed = m_stepTimer.begin();
    setPhase(Phase::Train);
    const auto inputs = batchInputs(m_data.train, batchIndices);
    const auto targets = m_data.batchTargetsAt(m_data.train, batchIndices);

    const double lr = m_schedule.at(m_step);
    setLearningRate(*m_optimizer, lr);

    compat::zeroGrad(*m_optimizer);
    m_gradients->prepare();
    m_stepTimer.lap(StepPart::Data);
    syncBuffers();
    m_stepTimer.lap(StepPart::Sync);
    torch::Tensor loss;
    {
        const AutocastScope autocast(m_device, m_precision); // as `with torch.autocast(...)`: forward and loss
        loss = lossOf(m_loss, m_model->forward(inputs), targets, false);
    }
    if (m_testSlowdown.count() > 0) std::this_thread::sleep_for(m_testSlowdown);
    // Every rank learns the all-rank mean loss and whether any rank was asked to stop: the two values ride
    // in the last gradient bucket (one collective a step), or, with no bucket to carry them, travel in a
    // small all-reduce of their own, launched before backward so it overlaps it.
    auto shared = torch::stack({loss.detach().to(torch::kFloat32),
                                torch::tensor(stopRequested() ? 1.0f : 0.0f, loss.options().dtype(torch::kFloat32))});
    const bool carried = m_gradients->carry(shared);
    auto sharedWork = carried ? c10::intrusive_ptr<c10d::Work>() : m_communicator->allreduceSumAsync(shared);
    m_scaler->scaled(loss).backward();
    m_stepTimer.lap(StepPart::Compute);
    m_stepTimer.move(StepPart::Compute, StepPart::Sync, m_gradients->launchSeconds());
    m_gradients->finish();
    m_stepTimer.lap(StepPart::Sync);
    m_scaler->step(*m_optimizer, m_step + 1);
    m_stepTimer.lap(StepPart::Optimizer);
    waitWork(sharedWork, "loss all-reduce");
    const auto sharedCpu = carried ? m_gradients->carried().to(torch::kCPU, torch::kFloat64) : shared.cpu();
    m_stepTimer.lap(StepPart::Sync);
    if (timed && m_reporter) m_reporter->addStepTiming(m_stepTimer.parts());
    ++m_step;
    setPhase(Phase::Train); // heartbeats carry the new step count from here on

    const double globalLoss = sharedCpu[0].item<double>() / m_env.worldSize;
    const bool stop = sharedCpu[1].item<double>() > 0.0;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - stepStart).count();
    const auto globalRows = batchIndices.size(0) * m_env.worldSize;
    m_trainSeconds += seconds;
    m_trainSamples += globalRows;
    m_lastLoss = globalLoss;
    if (!std::isfinite(globalLoss)) {
        throw std::runtime_error("loss became " + std::to_string(globalLoss) + " at step " + std::to_string(m_step) +
                                 ": lower --lr or add --warmup-steps");
    }
    if (isLeader()) {
        const double samplesPerSec = static_cast<double>(globalRows) / std::max(seconds, 1e-9);
        const double wallTime = elapsedSeconds();
        m_recorder->appendStep(m_step, epoch, globalLoss, lr, samplesPerSec, wallTime);
        m_tensorboard->writeScalars(m_step, {{protocol::column::kLoss, globalLoss}, {protocol::column::kLr, lr}, {protocol::column::kSamplesPerSec, samplesPerSec}});
        if (m_reporter) {
            m_reporter->send({{wire::kKeyType, wire::kTypeStep}, {wire::kKeyStep, m_step}, {wire::kKeyEpoch, epoch},
                              {wire::kKeyLoss, globalLoss}, {wire::kKeyLr, lr}, {wire::kKeySamplesPerSec, samplesPerSec},
                              {wire::kKeyWallTime, wallTime}});
        }
        if (m_step % m_config.logEvery == 0 || m_step == m_totalSteps || stop) {
            log::info("metric step={} epoch={} loss={:.6f} lr={:.6g} samples_per_sec={:.1f} wall_time={:.3f}", m_step,
                         epoch, globalLoss, lr, samplesPerSec, wallTime);
        }
    }
    if (stop) log::info("stop requested (signal {}): stopping after step {}", stopSignal(), m_step);
    return stop;
}

void Trainer::evaluate(std::int64_t epoch)
{
    if (m_data.val.size() == 0) return; // no validation set: nothing to evaluate
    setPhase(Phase::Eval);
    syncBuffers(); // every rank evaluates, and rank 0 saves, rank 0's batch-norm statistics
    torch::NoGradGuard noGrad;
    m_model->eval();
    const auto shard = evaluationShard(m_data.val.size(), m_env.worldSize, m_env.rank).to(m_data.dataDevice());
    auto totals = torch::zeros({3}, torch::TensorOptions().dtype(torch::kFloat64).device(m_device));
    for (std::int64_t begin = 0; begin < shard.size(0); begin += m_config.evalBatchSize) {
        const auto indices = shard.narrow(0, begin, std::min(m_config.evalBatchSize, shard.size(0) - begin));
        const auto inputs = batchInputs(m_data.val, indices);
        const auto targets = m_data.batchTargetsAt(m_data.val, indices);
        const AutocastScope autocast(m_device, m_precision);
        const auto output = m_model->forward(inputs);
        totals[0] += lossOf(m_loss, output, targets, true).to(torch::kFloat64);
        if (hasAccuracy(m_loss)) totals[1] += correctCount(m_loss, output, targets).to(torch::kFloat64);
        totals[2] += static_cast<double>(indices.size(0));
    }
    m_model->train();
    m_communicator->allreduceSum(totals);
    const auto sums = totals.cpu();
    const double count = sums[2].item<double>();
    // Every loss sums per-sample losses (MSE/BCE: the mean over a sample's outputs), so all divide by samples.
    m_lastEval.loss = sums[0].item<double>() / count;
    m_lastEval.accuracy = hasAccuracy(m_loss) ? sums[1].item<double>() / count : std::nan("");
    m_lastEvalStep = m_step;
    const EvalResult& result = m_lastEval;
    if (isLeader()) {
        m_recorder->appendEval(epoch, m_step, result.loss, result.accuracy);
        std::vector<TensorBoardWriter::Scalar> evalScalars{{protocol::column::kValLoss, result.loss}};
        if (!std::isnan(result.accuracy)) evalScalars.push_back({protocol::column::kValAccuracy, result.accuracy});
        m_tensorboard->writeScalars(m_step, evalScalars);
        log::info("eval epoch={} step={} val_loss={:.6f} val_accuracy={:.4f} samples={}", epoch, m_step, result.loss,
                     result.accuracy, static_cast<std::int64_t>(count));
        if (m_reporter) {
            m_reporter->send({{wire::kKeyType, wire::kTypeEval}, {wire::kKeyEpoch, epoch}, {wire::kKeyStep, m_step},
                              {wire::kKeyValLoss, result.loss},
                              {wire::kKeyValAccuracy,
                               std::isnan(result.accuracy) ? nlohmann::json() : nlohmann::json(result.accuracy)}});
        }
    }
}

void Trainer::saveCheckpoint(std::int64_t epoch, std::int64_t batchInEpoch)
{
    if (m_lastCheckpointStep == m_step) return;
    m_lastCheckpointStep = m_step;
    if (!isLeader()) return;
    setPhase(Phase::Checkpoint);
    CheckpointHeader header;
    header.model = m_config.model;
    header.optimizer = m_config.optimizer;
    header.position = LoopPosition{m_step, epoch, batchInEpoch, m_config.seed, m_env.worldSize, m_config.batchSize,
                                   elapsedSeconds()};
    header.precision = m_config.precision;
    if (m_scaler->enabled()) header.lossScaler = m_scaler->state();
    const auto path = ringmaster::trainer::saveCheckpoint(m_config.out, header, *m_model, *m_optimizer, m_device,
                                                          m_config.keepCheckpoints, m_best ? m_best->step() : -1);
    m_lastCheckpointPath = path;
    log::info("checkpoint step={} path={}", m_step, path);
    if (m_reporter) {
        m_reporter->send({{wire::kKeyType, wire::kTypeCheckpoint}, {wire::kKeyStep, m_step}, {wire::kKeyPath, path}});
    }
}

void Trainer::keepIfBest(std::int64_t epoch, std::int64_t batchInEpoch)
{
    if (!isLeader() || !m_best || !m_best->enabled() || m_lastEvalStep != m_step) return;
    const double value = m_best->valueOf(m_lastEval.loss, m_lastEval.accuracy);
    if (!m_best->improves(value)) return;
    const std::int64_t previous = m_best->step();
    saveCheckpoint(epoch, batchInEpoch); // this step's, unless it has one
    m_best->record(m_step, value, m_lastCheckpointPath);
    // The previous best is an ordinary checkpoint now: the rotation may take it.
    if (previous >= 0) pruneCheckpoints(m_config.out, m_config.keepCheckpoints, m_best->step());
}

void Trainer::finish(Outcome outcome)
{
    if (outcome == Outcome::Completed) {
        if (m_lastEvalStep != m_step) evaluate((std::max<std::int64_t>(m_step, 1) - 1) / m_stepsPerEpoch);
        const bool epochEnd = m_step % m_stepsPerEpoch == 0;
        saveCheckpoint(m_step / m_stepsPerEpoch, epochEnd ? 0 : m_step % m_stepsPerEpoch);
        keepIfBest(m_step / m_stepsPerEpoch, epochEnd ? 0 : m_step % m_stepsPerEpoch);
    }
    setPhase(Phase::Done);
    syncBuffers();
    log::info("final step={} parameter_digest={:016x}", m_step, parameterDigest(*m_model));
    if (!isLeader()) return;
    writeModelWeights((fs::path(m_config.out) / protocol::kModelFile).string(), *m_model);
    if (m_scripted) m_scripted->saveTorchScript((fs::path(m_config.out) / "model.torchscript.pt").string());
    const std::string status = outcome == Outcome::Completed ? wire::kStatusCompleted : wire::kStatusStopped;
    writeSummary(status, "");
    log::info("done status={} steps={} loss={:.6f} val_loss={:.6f} val_accuracy={:.4f} samples_per_sec={:.1f} seconds={:.2f}",
                 status, m_step, m_lastLoss, m_lastEval.loss, m_lastEval.accuracy,
                 m_trainSamples / std::max(m_trainSeconds, 1e-9), elapsedSeconds());
    if (m_reporter) {
        m_reporter->send({{wire::kKeyType, wire::kTypeStatus}, {wire::kKeyStatus, status}, {wire::kKeyStep, m_step}});
    }
}

void Trainer::writeClassNames() const
{
    if (m_data.classNames.empty()) return;
    const nlohmann::json names = m_data.classNames;
    writeFileAtomically((fs::path(m_config.out) / protocol::kClassesFile).string(),
                        names.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void Trainer::writeSummary(const std::string& status, const std::string& message)
{
    auto number = [](double value) { return std::isfinite(value) ? nlohmann::json(value) : nlohmann::json(); };
    auto textOrNull = [](const std::string& text) { return text.empty() ? nlohmann::json() : nlohmann::json(text); };
    nlohmann::json summary = {
        {"status", status},
        {"message", message},
        {"model", m_config.model},
        {"data", m_data.description},
        {"data_format", formatName(m_data.format)},
        {"train_samples", m_data.train.size()},
        {"val_samples", m_data.val.size()},
        {"val_source", m_data.valSource},
        {"class_count", m_data.classCount},
        {"loss", lossName(m_loss)},
        {"normalize", {{"mean", m_data.mean}, {"std", m_data.std}, {"source", m_data.normalization}}},
        {"world_size", m_env.worldSize},
        {"backend", m_config.backend},
        {"device", m_device.str()},
        {"libtorch_version", TORCH_VERSION},
        // What this binary was compiled with; null in a build whose LibTorch has no CUDA.
        {"cuda_version", textOrNull(compiledCudaVersion())},
        {"nccl_version", textOrNull(compiledNcclVersion())},
        {"precision", m_config.precision},
        {"batch_size_per_rank", m_config.batchSize},
        {"steps", m_step},
        {"epochs", m_stepsPerEpoch > 0 ? static_cast<double>(m_step) / static_cast<double>(m_stepsPerEpoch) : 0.0},
        {"final_loss", number(m_lastLoss)},
        {"val_loss", m_lastEvalStep >= 0 ? number(m_lastEval.loss) : nlohmann::json()},
        {"val_accuracy", m_lastEvalStep >= 0 ? number(m_lastEval.accuracy) : nlohmann::json()},
        {"samples_per_sec", number(m_trainSamples / std::max(m_trainSeconds, 1e-9))},
        {"seconds", elapsedSeconds()},
        {"resumed_from", m_resumePath},
        {"best_checkpoint", m_best ? m_best->summary() : nlohmann::json()},
    };
    if (m_scaler->enabled()) {
        summary["loss_scale"] = m_scaler->scale();
        summary["skipped_steps"] = m_scaler->skippedSteps();
    }
    if (m_device.is_cuda()) {
        const auto peak = peakDeviceMemory(m_device);
        summary["peak_gpu_allocated_mb"] = static_cast<double>(peak.allocatedBytes) / kBytesPerMb;
        summary["peak_gpu_reserved_mb"] = static_cast<double>(peak.reservedBytes) / kBytesPerMb;
    }
    m_recorder->writeSummary(summary);
}

} // namespace ringmaster::trainer
