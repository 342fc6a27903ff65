#include "trainer/checkpoint.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/export.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include "protocol/run_layout.h"
#include "trainer/atomic_file.h"
#include "trainer/device_setup.h"
#include "trainer/errors.h"
#include "trainer/zip_records.h"

namespace fs = std::filesystem;

namespace ringmaster::trainer {
namespace {

constexpr std::int64_t kCheckpointFormat = 1;

void createFolders(const fs::path& dir)
{
    std::error_code error;
    fs::create_directories(dir, error);
    if (error) throw IoError(dir.string(), "create folder", error.value());
}

// RUN_DIR/checkpoints only, never RUN_DIR itself: a run directory deleted while the run trains is an
// error (the rank fails naming the folder), not something to recreate with nothing but checkpoints in it.
void createCheckpointFolder(const fs::path& dir)
{
    std::error_code error;
    fs::create_directory(dir, error);
    if (error) throw IoError(dir.string(), "create folder", error.value());
}

// Test hook, inert unless RINGMASTER_TEST_STALL_CHECKPOINT is set to a step (tests/supervisor/
// tst_fault_matrix.cpp sets it): the checkpoint of that step stops for up to 60 s after its first bytes
// reach the temp file, so a test can kill the rank in the middle of a checkpoint write every time.
constexpr std::chrono::seconds kTestStall{60};

bool stallsForTests(std::int64_t step)
{
    const char* value = std::getenv("RINGMASTER_TEST_STALL_CHECKPOINT");
    return value != nullptr && *value != '\0' && std::strtoll(value, nullptr, 10) == step;
}

// The step in a checkpoint's file name (step-NNNNNNNN.pt), or -1.
std::int64_t stepOfName(const std::string& name)
{
    const std::string prefix = protocol::kCheckpointPrefix;
    if (name.rfind(prefix, 0) != 0) return -1;
    try {
        std::size_t used = 0;
        const auto step = std::stoll(name.substr(prefix.size()), &used);
        return name.substr(prefix.size() + used) == ".pt" ? step : -1;
    } catch (const std::exception&) {
        return -1;
    }
}

std::string utcStamp()
{
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    ::gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%dT%H%M%SZ", &utc);
    return text;
}

std::string checkpointName(std::int64_t step)
{
    char name[64];
    std::snprintf(name, sizeof name, "%s%08lld.pt", protocol::kCheckpointPrefix, static_cast<long long>(step));
    return name;
}

std::int64_t readInt(torch::serialize::InputArchive& archive, const char* key)
{
    c10::IValue value;
    archive.read(key, value);
    return value.toInt();
}

// The CPU generator (dropout masks on CPU): a resumed run draws the masks the straight run would have.
// Older checkpoints lack it and resume as before.
constexpr const char* kCpuRngKey = "rng.cpu";
// The rank's CUDA generator (dropout masks on a GPU), in checkpoints written on a GPU.
constexpr const char* kCudaRngKey = "rng.cuda";

torch::Tensor cpuRngState()
{
    auto generator = at::detail::getDefaultCPUGenerator();
    std::lock_guard<std::mutex> lock(generator.mutex());
    return generator.get_state();
}

} // namespace

std::vector<std::string> listCheckpoints(const std::string& runDir)
{
    std::vector<std::string> files;
    const fs::path dir = fs::path(runDir) / protocol::kCheckpointsFolder;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
        if (entry.is_regular_file() && stepOfName(entry.path().filename().string()) >= 0) {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end(), [](const std::string& a, const std::string& b) {
        return stepOfName(fs::path(a).filename().string()) < stepOfName(fs::path(b).filename().string());
    });
    return files;
}

std::string saveCheckpoint(const std::string& runDir, const CheckpointHeader& header, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer, const torch::Device& device, int keep,
                           std::int64_t keepAlso)
{
    const fs::path dir = fs::path(runDir) / protocol::kCheckpointsFolder;
    createCheckpointFolder(dir);
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive modelArchive;
    model.save(modelArchive);
    archive.write("model", modelArchive);
    torch::serialize::OutputArchive optimizerArchive;
    optimizer.save(optimizerArchive);
    archive.write("optimizer", optimizerArchive);
    const auto& p = header.position;
    archive.write("meta.format", c10::IValue(kCheckpointFormat));
    archive.write("meta.model", c10::IValue(header.model));
    archive.write("meta.optimizer", c10::IValue(header.optimizer));
    archive.write("meta.step", c10::IValue(p.step));
    archive.write("meta.epoch", c10::IValue(p.epoch));
    archive.write("meta.batch_in_epoch", c10::IValue(p.batchInEpoch));
    archive.write("meta.seed", c10::IValue(static_cast<std::int64_t>(p.seed)));
    archive.write("meta.world_size", c10::IValue(p.worldSize));
    archive.write("meta.batch_size", c10::IValue(p.batchSize));
    archive.write("meta.wall_time", c10::IValue(p.wallTime));
    archive.write("meta.precision", c10::IValue(header.precision));
    archive.write("meta.loss_scale", c10::IValue(header.lossScaler.scale));
    archive.write("meta.loss_scale_growth_tracker", c10::IValue(header.lossScaler.growthTracker));
    archive.write(kCpuRngKey, cpuRngState());
    if (const auto deviceState = deviceRngState(device); deviceState.defined()) archive.write(kCudaRngKey, deviceState);

    const std::string path = (dir / checkpointName(p.step)).string();
    {
        // The serializer writes through us: a full disk is recorded here and reported by commit(),
        // never thrown through LibTorch's zip writer (whose destructor would then throw a second time
        // and terminate the process) and never left as a temp file.
        AtomicFile file(path);
        bool stall = stallsForTests(p.step);
        archive.save_to([&file, &stall](const void* data, std::size_t size) {
            file.writeOrRecord(data, size);
            if (stall) { // the test hook above: off unless its variable names this step
                stall = false;
                std::this_thread::sleep_for(kTestStall);
            }
            return size;
        });
        file.commit();
    }

    pruneCheckpoints(runDir, keep, keepAlso);
    return path;
}

void pruneCheckpoints(const std::string& runDir, int keep, std::int64_t keepAlso)
{
    const auto existing = listCheckpoints(runDir); // oldest first
    const auto older = existing.size() > static_cast<std::size_t>(keep) ? existing.size() - keep : 0;
    for (std::size_t i = 0; i < older; ++i) {
        if (stepOfName(fs::path(existing[i]).filename().string()) != keepAlso) fs::remove(existing[i]);
    }
}

bool isInCheckpointFolder(const std::string& runDir, const std::string& checkpoint)
{
    std::error_code error;
    const fs::path folder = fs::weakly_canonical(fs::path(runDir) / protocol::kCheckpointsFolder, error);
    const fs::path parent = fs::weakly_canonical(fs::path(checkpoint), error).parent_path();
    return !error && parent == folder;
}

std::string abandonCheckpointsAfter(const std::string& runDir, std::int64_t step)
{
    std::vector<fs::path> later;
    for (const auto& file : listCheckpoints(runDir)) {
        if (stepOfName(fs::path(file).filename().string()) > step) later.emplace_back(file);
    }
    if (later.empty()) return {};
    const fs::path dir = fs::path(runDir) / protocol::kCheckpointsFolder;
    fs::path target = dir / (std::string(kAbandonedPrefix) + utcStamp());
    for (int suffix = 2; fs::exists(target); ++suffix) {
        target = dir / (std::string(kAbandonedPrefix) + utcStamp() + "-" + std::to_string(suffix));
    }
    createFolders(target);
    for (const auto& file : later) {
        std::error_code error;
        fs::rename(file, target / file.filename(), error);
        if (error) throw IoError(file.string(), "move abandoned checkpoint", error.value());
    }
    return target.string();
}

CheckpointHeader readCheckpointHeader(const std::string& path)
{
    torch::serialize::InputArchive archive;
    CheckpointHeader header;
    try {
        archive.load_from(path, torch::Device(torch::kCPU)); // the header's tensors never touch a GPU
        if (readInt(archive, "meta.format") != kCheckpointFormat) {
            throw UsageError("--resume " + path + ": checkpoint format is newer than this trainer understands");
        }
        c10::IValue value;
        archive.read("meta.model", value);
        header.model = value.toStringRef();
        archive.read("meta.optimizer", value);
        header.optimizer = value.toStringRef();
        auto& p = header.position;
        p.step = readInt(archive, "meta.step");
        p.epoch = readInt(archive, "meta.epoch");
        p.batchInEpoch = readInt(archive, "meta.batch_in_epoch");
        p.seed = static_cast<std::uint64_t>(readInt(archive, "meta.seed"));
        p.worldSize = readInt(archive, "meta.world_size");
        p.batchSize = readInt(archive, "meta.batch_size");
        archive.read("meta.wall_time", value);
        p.wallTime = value.toDouble();
        // Written since --precision exists; an older checkpoint is an fp32 one without a loss scaler.
        if (archive.try_read("meta.precision", value)) header.precision = value.toStringRef();
        if (archive.try_read("meta.loss_scale", value)) header.lossScaler.scale = value.toDouble();
        if (archive.try_read("meta.loss_scale_growth_tracker", value)) header.lossScaler.growthTracker = value.toInt();
    } catch (const UsageError&) {
        throw;
    } catch (const std::exception& e) {
        throw UsageError("--resume " + path + ": not a readable Ringmaster checkpoint (" + oneLineMessage(e) + ")");
    }
    return header;
}

void loadCheckpointState(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer,
                         const torch::Device& device)
{
    // Every tensor (parameters, buffers, optimizer state) is mapped onto this rank's device while
    // loading: without it, tensors saved from cuda:0 come back on cuda:0 on every rank, and loading
    // into a parameter on another device replaces that parameter's storage with the cuda:0 one.
    torch::serialize::InputArchive archive;
    archive.load_from(path, device);
    torch::serialize::InputArchive modelArchive;
    archive.read("model", modelArchive);
    model.load(modelArchive);
    torch::serialize::InputArchive optimizerArchive;
    archive.read("optimizer", optimizerArchive);
    optimizer.load(optimizerArchive);
    torch::Tensor rng;
    if (archive.try_read(kCpuRngKey, rng)) {
        auto generator = at::detail::getDefaultCPUGenerator();
        std::lock_guard<std::mutex> lock(generator.mutex());
        generator.set_state(rng.cpu());
    }
    torch::Tensor deviceRng;
    if (archive.try_read(kCudaRngKey, deviceRng)) setDeviceRngState(device, deviceRng);
}

void verifyCheckpoint(const std::string& path)
{
    {
        // A file that does not even start like a zip archive is something else, not a damaged checkpoint.
        std::ifstream in(path, std::ios::binary);
        char magic[4] = {};
        if (!in.read(magic, sizeof magic) || std::memcmp(magic, "PK\x03\x04", sizeof magic) != 0) {
            throw UsageError("--resume " + path + ": not a readable Ringmaster checkpoint (not a zip archive)");
        }
    }
    if (const std::string damage = zipRecordDamage(path); !damage.empty()) {
        throw UsageError("--resume " + path + ": damaged checkpoint (" + damage + ")");
    }
    readCheckpointHeader(path);
}

std::string resolveCheckpoint(const std::string& fileOrRunDir, std::vector<std::string>* skipped)
{
    std::error_code unreachable; // a name the system refuses (too long, a loop) is neither, not an exception
    if (fs::is_regular_file(fileOrRunDir, unreachable)) {
        try {
            verifyCheckpoint(fileOrRunDir);
        } catch (const UsageError& e) {
            throw UsageError(std::string(e.what()) + "; resume from an earlier checkpoint, or from the run directory "
                             "to use its newest intact one");
        }
        return fileOrRunDir;
    }
    if (!fs::is_directory(fileOrRunDir, unreachable)) {
        throw UsageError("--resume " + fileOrRunDir + ": no such checkpoint file or run directory");
    }
    const auto files = listCheckpoints(fileOrRunDir);
    if (files.empty()) {
        throw UsageError("--resume " + fileOrRunDir + ": no checkpoints/step-*.pt in this run directory");
    }
    for (auto it = files.rbegin(); it != files.rend(); ++it) {
        try {
            verifyCheckpoint(*it);
            return *it;
        } catch (const UsageError& e) {
            if (skipped) skipped->push_back(e.what());
        }
    }
    throw UsageError("--resume " + fileOrRunDir + ": every checkpoint in this run directory is damaged (newest: " +
                     files.back() + "); start a new run");
}

void writeModelWeights(const std::string& path, torch::nn::Module& model)
{
    c10::Dict<std::string, at::Tensor> weights;
    // Default (row-major) layout, whatever layout training used, so Python sees ordinary tensors.
    for (const auto& item : model.named_parameters()) {
        weights.insert(item.key(), item.value().detach().cpu().contiguous().clone());
    }
    for (const auto& item : model.named_buffers()) {
        weights.insert(item.key(), item.value().detach().cpu().contiguous().clone());
    }
    writeFileAtomically(path, plainPickleArchive(c10::IValue(weights)));
}

std::string plainPickleArchive(const c10::IValue& value)
{
    // torch::pickle_save's own steps, with one difference: Pickler's tag_aggregates off. With it on (the
    // default), a Dict is wrapped in torch.jit._pickle.restore_type_tag, a global that torch.load's
    // weights_only unpickler (the default since PyTorch 2.6) refuses; off, it is a plain Python dict.
    std::vector<char> pickled;
    torch::jit::Pickler pickler([&](const char* data, size_t size) { pickled.insert(pickled.end(), data, data + size); },
                                nullptr, nullptr, nullptr, nullptr, /*tag_aggregates=*/false);
    pickler.protocol();
    pickler.pushIValue(value);
    pickler.stop();
    std::string archive;
    caffe2::serialize::PyTorchStreamWriter writer([&](const void* data, size_t size) -> size_t {
        archive.append(static_cast<const char*>(data), size);
        return size;
    });
    torch::jit::writeArchiveAndTensors("data", pickled.data(), pickled.size(), pickler.tensorData(), writer);
    writer.writeEndOfFile();
    return archive;
}

} // namespace ringmaster::trainer
