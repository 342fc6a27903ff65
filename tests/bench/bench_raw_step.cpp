// The raw compute limit of one rank: the trainer's own model and layout, a LibTorch loop of forward, loss,
// backward and optimizer step on one fixed batch, and nothing else (no data, no sampler, no all-reduce, no
// reporting, no files). tests/bench/bench_trainer.py runs it interleaved with the trainer and prints the
// trainer's share of it; what the trainer loses against this loop is its own overhead.
//
//   bench_raw_step [--model cnn] [--steps 300] [--warmup 20] [--batch-size 64] [--threads 1] [--malloc default]
//
// Prints one line: raw samples_per_sec=X steps=N. --malloc default leaves glibc's allocator as it is (to
// measure what allocator_tuning.h buys); otherwise the step memory is kept in the heap as in the trainer.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <torch/torch.h>

#include "trainer/allocator_tuning.h"
#include "trainer/compat.h"
#include "trainer/loss.h"
#include "trainer/models.h"

namespace {

struct Options
{
    std::string model = "cnn";
    long steps = 300;
    long warmup = 20;
    long batchSize = 64;
    int threads = 1;
    bool defaultMalloc = false;
};

Options parse(int argc, char** argv)
{
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string flag = argv[i];
        const char* value = argv[i + 1];
        if (flag == "--model") o.model = value;
        else if (flag == "--steps") o.steps = std::atol(value);
        else if (flag == "--warmup") o.warmup = std::atol(value);
        else if (flag == "--batch-size") o.batchSize = std::atol(value);
        else if (flag == "--threads") o.threads = std::atoi(value);
        else if (flag == "--malloc") o.defaultMalloc = std::string(value) == "default";
        else {
            std::fprintf(stderr, "bench_raw_step: unknown flag %s\n", flag.c_str());
            std::exit(2);
        }
    }
    if (o.steps <= o.warmup || o.batchSize <= 0 || o.threads <= 0) {
        std::fprintf(stderr, "bench_raw_step: need --steps > --warmup, --batch-size > 0, --threads > 0\n");
        std::exit(2);
    }
    return o;
}

} // namespace

int main(int argc, char** argv)
{
    namespace rt = ringmaster::trainer;
    const Options o = parse(argc, argv);
    at::set_num_threads(o.threads);
    torch::manual_seed(42);
    // Fashion-MNIST's shape, standardised-looking values: the kernels do not depend on the values (docs/performance.md).
    const rt::ModelShape shape{{1, 28, 28}, 10};
    auto model = rt::makeModel(o.model, shape);
    rt::preferChannelsLast(*model);
    auto inputs = torch::randn({o.batchSize, 1, 28, 28});
    if (o.model == "cnn") inputs = inputs.contiguous(torch::MemoryFormat::ChannelsLast);
    const auto targets = torch::randint(0, 10, {o.batchSize}, torch::kLong);
    torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01).momentum(0.9));
    if (!o.defaultMalloc) rt::keepStepMemoryInTheHeap();

    std::chrono::steady_clock::time_point start;
    double lastLoss = 0.0;
    for (long step = 0; step < o.steps; ++step) {
        if (step == o.warmup) start = std::chrono::steady_clock::now();
        ringmaster::compat::zeroGrad(optimizer);
        const auto loss = rt::lossOf(rt::LossKind::CrossEntropy, model->forward(inputs), targets, false);
        loss.backward();
        optimizer.step();
        if (step + 1 == o.steps) lastLoss = loss.item<double>();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("raw samples_per_sec=%.1f steps=%ld loss=%.4f\n",
                static_cast<double>((o.steps - o.warmup) * o.batchSize) / seconds, o.steps, lastLoss);
    return 0;
}
