#include "checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

#include "errors.h"

namespace fs = std::filesystem;

namespace ringmaster::trainer {
namespace {

constexpr std::int64_t kCheckpointFormat = 1;
constexpr const char* kCheckpointPrefix = "step-";

void fsyncPath(const std::string& path, bool directory)
{
    const int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

std::string tempPathFor(const std::string& path)
{
    return path + ".tmp-" + std::to_string(::getpid());
}

void commit(const std::string& tempPath, const std::string& path)
{
    fsyncPath(tempPath, false);
    fs::rename(tempPath, path);
    fsyncPath(fs::path(path).parent_path().string(), true);
}

std::string checkpointName(std::int64_t step)
{
    char name[64];
    std::snprintf(name, sizeof name, "%s%08lld.pt", kCheckpointPrefix, static_cast<long long>(step));
    return name;
}

std::int64_t readInt(torch::serialize::InputArchive& archive, const char* key)
{
    c10::IValue value;
    archive.read(key, value);
    return value.toInt();
}

} // namespace

void writeFileAtomically(const std::string& path, const std::string& bytes)
{
    const auto tempPath = tempPathFor(path);
    {
        std::ofstream out(tempPath, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        if (!out) {
            std::remove(tempPath.c_str());
            throw std::runtime_error("cannot write " + path + " (disk full or folder not writable?)");
        }
    }
    commit(tempPath, path);
}

std::vector<std::string> listCheckpoints(const std::string& runDir)
{
    std::vector<std::string> files;
    const fs::path dir = fs::path(runDir) / "checkpoints";
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(dir, error)) {
        const auto name = entry.path().filename().string();
        if (name.rfind(kCheckpointPrefix, 0) == 0 && entry.path().extension() == ".pt") {
            files.push_back(entry.path().string());
        }
    }
    std::sort(files.begin(), files.end()); // zero-padded step numbers sort in step order
    return files;
}

std::string saveCheckpoint(const std::string& runDir, const CheckpointHeader& header, torch::nn::Module& model,
                           torch::optim::Optimizer& optimizer, int keep)
{
    const fs::path dir = fs::path(runDir) / "checkpoints";
    fs::create_directories(dir);
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

    const std::string path = (dir / checkpointName(p.step)).string();
    const std::string tempPath = tempPathFor(path);
    archive.save_to(tempPath);
    commit(tempPath, path);

    auto existing = listCheckpoints(runDir);
    while (existing.size() > static_cast<std::size_t>(keep)) {
        fs::remove(existing.front());
        existing.erase(existing.begin());
    }
    return path;
}

CheckpointHeader readCheckpointHeader(const std::string& path)
{
    torch::serialize::InputArchive archive;
    CheckpointHeader header;
    try {
        archive.load_from(path);
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
    } catch (const UsageError&) {
        throw;
    } catch (const std::exception& e) {
        const std::string message = e.what();
        throw UsageError("--resume " + path + ": not a readable Ringmaster checkpoint (" +
                         message.substr(0, message.find('\n')) + ")");
    }
    return header;
}

void loadCheckpointState(const std::string& path, torch::nn::Module& model, torch::optim::Optimizer& optimizer)
{
    torch::serialize::InputArchive archive;
    archive.load_from(path);
    torch::serialize::InputArchive modelArchive;
    archive.read("model", modelArchive);
    model.load(modelArchive);
    torch::serialize::InputArchive optimizerArchive;
    archive.read("optimizer", optimizerArchive);
    optimizer.load(optimizerArchive);
}

std::string resolveCheckpoint(const std::string& fileOrRunDir)
{
    if (fs::is_regular_file(fileOrRunDir)) return fileOrRunDir;
    if (fs::is_directory(fileOrRunDir)) {
        const auto files = listCheckpoints(fileOrRunDir);
        if (files.empty()) {
            throw UsageError("--resume " + fileOrRunDir + ": no checkpoints/step-*.pt in this run directory");
        }
        return files.back();
    }
    throw UsageError("--resume " + fileOrRunDir + ": no such checkpoint file or run directory");
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
    const auto bytes = torch::pickle_save(c10::IValue(weights));
    writeFileAtomically(path, std::string(bytes.begin(), bytes.end()));
}

} // namespace ringmaster::trainer
