// Steps ForeachSgd (core/trainer/foreach_sgd.h) and LibTorch's own torch::optim::SGD side by side on given
// parameters and gradients, for tests/trainer/test_foreach_sgd.py, which runs PyTorch's SGD on the same input.
//   ringmaster-optimizer-probe DIR STEPS LR MOMENTUM DAMPENING NESTEROV(0|1) WEIGHT_DECAY
// Parameters are three tensors of shapes [4, 3], [3] and [5] (20 floats); DIR holds float32 files:
//   params.bin  20 floats, the initial parameters;
//   grads.bin   STEPS x 20 floats, each step's gradients;
//   mask.bin    STEPS x 3 floats, 1 where the parameter has a gradient that step, 0 where it has none.
// Writes DIR/final-foreach.bin and DIR/final-sgd.bin (20 floats each), then saves ForeachSgd's state as a
// checkpoint does, loads it into a fresh torch::optim::SGD, steps both once more with the last step's gradients
// and prints "checkpoint resumes in SGD: identical" or "...: DIFFERENT". Exit 2 on bad arguments.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "trainer/foreach_sgd.h"

namespace {

const std::vector<std::vector<std::int64_t>> kShapes{{4, 3}, {3}, {5}};
constexpr std::int64_t kFloats = 20;

torch::Tensor readFloats(const std::string& path, std::int64_t count)
{
    std::ifstream in(path, std::ios::binary);
    auto tensor = torch::empty({count}, torch::kFloat32);
    in.read(reinterpret_cast<char*>(tensor.data_ptr<float>()), static_cast<std::streamsize>(count * sizeof(float)));
    if (!in) {
        std::fprintf(stderr, "optimizer-probe: cannot read %lld floats from %s\n", static_cast<long long>(count),
                     path.c_str());
        std::exit(2);
    }
    return tensor;
}

void writeFloats(const std::string& path, const std::vector<torch::Tensor>& params)
{
    std::ofstream out(path, std::ios::binary);
    for (const auto& p : params) {
        const auto flat = p.detach().contiguous();
        out.write(reinterpret_cast<const char*>(flat.data_ptr<float>()),
                  static_cast<std::streamsize>(flat.numel() * sizeof(float)));
    }
}

std::vector<torch::Tensor> split(const torch::Tensor& flat, bool requiresGrad)
{
    std::vector<torch::Tensor> parts;
    std::int64_t offset = 0;
    for (const auto& shape : kShapes) {
        std::int64_t numel = 1;
        for (const auto d : shape) numel *= d;
        parts.push_back(flat.narrow(0, offset, numel).reshape(shape).clone().set_requires_grad(requiresGrad));
        offset += numel;
    }
    return parts;
}

void setGradients(std::vector<torch::Tensor>& params, const torch::Tensor& grads, const torch::Tensor& mask)
{
    const auto parts = split(grads, false);
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (mask[static_cast<std::int64_t>(i)].item<float>() > 0.0f) params[i].mutable_grad() = parts[i].clone();
        else params[i].mutable_grad().reset();
    }
}

bool identical(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b)
{
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (!torch::equal(a[i], b[i])) return false;
    }
    return true;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 8) {
        std::fprintf(stderr, "usage: ringmaster-optimizer-probe DIR STEPS LR MOMENTUM DAMPENING NESTEROV WEIGHT_DECAY\n");
        return 2;
    }
    const std::string dir = argv[1];
    const long steps = std::atol(argv[2]);
    const auto options = torch::optim::SGDOptions(std::atof(argv[3]))
                             .momentum(std::atof(argv[4]))
                             .dampening(std::atof(argv[5]))
                             .nesterov(std::string(argv[6]) == "1")
                             .weight_decay(std::atof(argv[7]));
    const auto initial = readFloats(dir + "/params.bin", kFloats);
    const auto grads = readFloats(dir + "/grads.bin", steps * kFloats).view({steps, kFloats});
    const auto masks = readFloats(dir + "/mask.bin", steps * 3).view({steps, 3});

    auto foreachParams = split(initial, true);
    auto sgdParams = split(initial, true);
    ringmaster::trainer::ForeachSgd foreach(foreachParams, options);
    torch::optim::SGD sgd(sgdParams, options);
    for (long s = 0; s < steps; ++s) {
        setGradients(foreachParams, grads[s], masks[s]);
        setGradients(sgdParams, grads[s], masks[s]);
        foreach.step();
        sgd.step();
    }
    writeFloats(dir + "/final-foreach.bin", foreachParams);
    writeFloats(dir + "/final-sgd.bin", sgdParams);

    // A checkpoint written with ForeachSgd resumes in LibTorch's SGD (and so in older trainers) unchanged.
    torch::save(foreach, dir + "/optimizer.pt");
    std::vector<torch::Tensor> resumedParams;
    for (const auto& p : foreachParams) resumedParams.push_back(p.detach().clone().set_requires_grad(true));
    torch::optim::SGD resumed(resumedParams, options);
    torch::load(resumed, dir + "/optimizer.pt");
    setGradients(foreachParams, grads[steps - 1], torch::ones({3}));
    setGradients(resumedParams, grads[steps - 1], torch::ones({3}));
    foreach.step();
    resumed.step();
    std::printf("checkpoint resumes in SGD: %s\n", identical(foreachParams, resumedParams) ? "identical" : "DIFFERENT");
    return 0;
}
