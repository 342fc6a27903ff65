// Drives the trainer's gradient synchronisation pieces (Communicator, ShmAllreduce, GradientSynchronizer)
// directly, in real processes, for cases the built-in models cannot produce. One process is one rank;
// it reads the torchrun environment (RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
//   ringmaster-grad-sync-probe shm-reduce COUNT_STEP TAG_STEP
//       rank r sums 100 + COUNT_STEP*r floats of value r+1 with tag TAG_STEP*r; prints "sum ok" when every
//       element equals 1+2+...+W (exit 0), or "error: ..." (exit 1).
//   ringmaster-grad-sync-probe shm-setup-peer-leaves
//       rank 0 sets up the segment while every other rank leaves after the rendezvous; prints "pid P"
//       and the set-up error.
//   ringmaster-grad-sync-probe shm-peer-dies
//       every rank sets up the segment, then rank 1 leaves and rank 0 reduces; prints how long rank 0
//       took to give up ("gave up after S s") and the error.
//   ringmaster-grad-sync-probe shm-oversized
//       one rank asks for a segment twice the size of /dev/shm; prints the fallback warning.
//   ringmaster-grad-sync-probe world-size N
//       prints "ok" or the error for N ranks sharing one segment.
//   ringmaster-grad-sync-probe unused DATA_DIR FIND_UNUSED(0|1) TRANSPORT(shm|gloo) STEPS LR
//       trains BranchyModel with SGD (momentum 0.9) on DATA_DIR/inputs.bin and targets.bin (float32,
//       [world, steps, batch, features]) from DATA_DIR/init.bin, and writes DATA_DIR/final-rank<r>.bin.
// Exit codes as the trainer's: 2 for UsageError, 1 for other errors.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <sys/statvfs.h>
#include <unistd.h>

#include "trainer/communicator.h"
#include "trainer/dist_env.h"
#include "trainer/errors.h"
#include "trainer/grad_sync.h"
#include "trainer/shm_allreduce.h"

namespace rt = ringmaster::trainer;

namespace {

constexpr std::int64_t kInputs = 4;
constexpr std::int64_t kHidden = 8;
constexpr std::int64_t kOutputs = 3;
constexpr auto kTimeout = std::chrono::milliseconds(30000);

std::unique_ptr<rt::Communicator> connect()
{
    rt::CommunicatorOptions options;
    options.backend = "gloo";
    options.rendezvousTimeout = kTimeout;
    options.collectiveTimeout = kTimeout;
    return std::make_unique<rt::Communicator>(rt::readDistEnv(), options);
}

// A layer whose use depends on the rank and the step, as a data-dependent branch: `right` is used by
// exactly one rank in each step (rank == step mod world), `rare` by every rank in step 0 only.
class BranchyModel : public torch::nn::Module
{
public:
    BranchyModel()
    {
        trunk = register_module("trunk", torch::nn::Linear(kInputs, kHidden));
        left = register_module("left", torch::nn::Linear(kHidden, kOutputs));
        right = register_module("right", torch::nn::Linear(kHidden, kOutputs));
        rare = register_module("rare", torch::nn::Linear(kHidden, kOutputs));
    }
    torch::Tensor forward(const torch::Tensor& x, int rank, int world, int step)
    {
        const auto h = torch::tanh(trunk(x));
        auto y = left(h);
        if ((rank + step) % world == 0) y = y + right(h);
        if (step == 0) y = y + rare(h);
        return y;
    }
    torch::nn::Linear trunk{nullptr}, left{nullptr}, right{nullptr}, rare{nullptr};
};

torch::Tensor readFloats(const std::string& path)
{
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) throw std::runtime_error("cannot read " + path);
    const auto bytes = static_cast<std::size_t>(in.tellg());
    std::vector<float> values(bytes / sizeof(float));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(values.data()), static_cast<std::streamsize>(bytes));
    return torch::from_blob(values.data(), {static_cast<std::int64_t>(values.size())}, torch::kFloat32).clone();
}

void writeFloats(const std::string& path, const torch::Tensor& values)
{
    const auto flat = values.contiguous();
    std::ofstream out(path, std::ios::binary);
    out.write(static_cast<const char*>(flat.data_ptr()), static_cast<std::streamsize>(flat.nbytes()));
}

int shmReduce(std::int64_t countStep, std::uint64_t tagStep)
{
    auto communicator = connect();
    const int rank = communicator->rank();
    const int world = communicator->worldSize();
    const std::int64_t count = 100 + countStep * rank;
    auto reducer = rt::ShmAllreduce::create(*communicator, 100 + countStep * (world - 1) + 100, kTimeout);
    if (!reducer) throw std::runtime_error("shared memory unavailable");
    auto buffer = torch::full({count}, static_cast<float>(rank + 1));
    reducer->sumInPlace(buffer, tagStep * static_cast<std::uint64_t>(rank));
    const float expected = static_cast<float>(world * (world + 1) / 2);
    if (!buffer.eq(expected).all().item<bool>()) {
        std::printf("wrong sum: %s\n", buffer.slice(0, 0, 4).toString().c_str());
        return 1;
    }
    std::printf("sum ok\n");
    return 0;
}

int shmSetupPeerLeaves()
{
    auto communicator = connect();
    std::printf("pid %d\n", static_cast<int>(::getpid()));
    std::fflush(stdout);
    if (communicator->rank() != 0) return 0; // leaves: rank 0's set-up barrier fails
    auto reducer = rt::ShmAllreduce::create(*communicator, 1024, kTimeout);
    std::printf("set up %s\n", reducer ? "succeeded" : "fell back");
    return 0;
}

int shmPeerDies()
{
    auto communicator = connect();
    auto reducer = rt::ShmAllreduce::create(*communicator, 100, kTimeout);
    if (!reducer) throw std::runtime_error("shared memory unavailable");
    if (communicator->rank() == 1) return 0;
    const auto start = std::chrono::steady_clock::now();
    auto buffer = torch::ones({100});
    try {
        reducer->sumInPlace(buffer);
    } catch (...) {
        std::printf("gave up after %.2f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        throw;
    }
    return 0;
}

int shmOversized()
{
    struct statvfs info{};
    if (::statvfs("/dev/shm", &info) != 0 || info.f_blocks == 0) {
        std::printf("skip: /dev/shm has no size limit\n");
        return 0;
    }
    const auto total = static_cast<std::int64_t>(info.f_blocks) * static_cast<std::int64_t>(info.f_frsize);
    auto communicator = connect();
    auto reducer = rt::ShmAllreduce::create(*communicator, 2 * total / static_cast<std::int64_t>(sizeof(float)), kTimeout);
    std::printf("set up %s\n", reducer ? "succeeded" : "fell back");
    return 0;
}

int worldSize(int world)
{
    rt::ShmAllreduce::requireSupportedWorldSize(world);
    std::printf("ok\n");
    return 0;
}

int unused(const std::string& dir, bool findUnused, const std::string& transport, int steps, double lr)
{
    auto communicator = connect();
    const int rank = communicator->rank();
    const int world = communicator->worldSize();
    BranchyModel model;
    {
        torch::NoGradGuard noGrad;
        const auto init = readFloats(dir + "/init.bin");
        std::int64_t offset = 0;
        for (auto& param : model.parameters()) {
            param.copy_(init.narrow(0, offset, param.numel()).view(param.sizes()));
            offset += param.numel();
        }
    }
    const auto inputs = readFloats(dir + "/inputs.bin").view({world, steps, -1, kInputs});
    const auto targets = readFloats(dir + "/targets.bin").view({world, steps, -1, kOutputs});
    torch::optim::SGD optimizer(model.parameters(), torch::optim::SGDOptions(lr).momentum(0.9));
    // One bucket per parameter, so the order of buckets is the order that matters.
    rt::GradSyncOptions options{1, transport == "shm", findUnused, kTimeout};
    rt::GradientSynchronizer sync(model.parameters(), model.named_parameters().keys(), *communicator, options);
    std::printf("transport %s, %zu buckets\n", sync.transport().c_str(), sync.bucketCount());
    for (int step = 0; step < steps; ++step) {
        for (auto& param : model.parameters()) param.mutable_grad().reset();
        sync.prepare();
        const auto output = model.forward(inputs[rank][step], rank, world, step);
        torch::mse_loss(output, targets[rank][step]).backward();
        sync.finish();
        optimizer.step();
    }
    std::vector<torch::Tensor> flat;
    for (const auto& param : model.parameters()) flat.push_back(param.detach().reshape({-1}));
    writeFloats(dir + "/final-rank" + std::to_string(rank) + ".bin", torch::cat(flat));
    std::printf("trained %d steps\n", steps);
    return 0;
}

int run(const std::vector<std::string>& args)
{
    const std::string& mode = args.at(0);
    if (mode == "shm-reduce") return shmReduce(std::stoll(args.at(1)), std::stoull(args.at(2)));
    if (mode == "shm-setup-peer-leaves") return shmSetupPeerLeaves();
    if (mode == "shm-peer-dies") return shmPeerDies();
    if (mode == "shm-oversized") return shmOversized();
    if (mode == "world-size") return worldSize(std::stoi(args.at(1)));
    if (mode == "unused") {
        return unused(args.at(1), args.at(2) == "1", args.at(3), std::stoi(args.at(4)), std::stod(args.at(5)));
    }
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    // A peer that leaves mid-collective closes its socket: writing to it must fail as an error that the set-up
    // cleans up after (the segment removed, "barrier failed", exit 1), not end this process with SIGPIPE, which
    // a loaded machine's timing gave instead of ECONNRESET (test_set_up_that_throws_leaves_no_segment).
    std::signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODE ARGS... (see the source's header)\n", argv[0]);
        return 2;
    }
    try {
        return run(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const rt::UsageError& e) {
        std::printf("error: %s\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        const std::string message = e.what();
        std::printf("error: %s\n", message.substr(0, message.find('\n')).c_str());
        return 1;
    }
}
