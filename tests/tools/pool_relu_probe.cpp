// Runs the cnn's fused max-pool + ReLU (core/trainer/models/pool_relu.h) forward and backward on tensors
// from a file, for tests/trainer/test_pool_relu.py, which compares them with PyTorch's own:
//   ringmaster-pool-relu-probe N C H W IN_PREFIX OUT_PREFIX
// reads IN_PREFIX.input (N*C*H*W float32) and IN_PREFIX.grad (N*C*(H/2)*(W/2) float32), raw little-endian in
// NCHW order, lays the input out channels-last as the trainer does, and writes OUT_PREFIX.output and
// OUT_PREFIX.grad_input the same way (NCHW order).
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "models/pool_relu.h"

namespace {

torch::Tensor readFloats(const std::string& path, std::vector<std::int64_t> sizes)
{
    auto tensor = torch::empty(sizes, torch::kFloat32);
    std::ifstream in(path, std::ios::binary);
    in.read(reinterpret_cast<char*>(tensor.data_ptr<float>()), static_cast<std::streamsize>(tensor.nbytes()));
    if (!in) {
        std::fprintf(stderr, "error: cannot read %lld bytes from %s\n", static_cast<long long>(tensor.nbytes()),
                     path.c_str());
        std::exit(2);
    }
    return tensor;
}

void writeFloats(const std::string& path, const torch::Tensor& tensor)
{
    const auto nchw = tensor.contiguous();
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(nchw.data_ptr<float>()), static_cast<std::streamsize>(nchw.nbytes()));
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 7) {
        std::fprintf(stderr, "usage: ringmaster-pool-relu-probe N C H W IN_PREFIX OUT_PREFIX\n");
        return 2;
    }
    const std::int64_t n = std::atoll(argv[1]), c = std::atoll(argv[2]), h = std::atoll(argv[3]), w = std::atoll(argv[4]);
    const std::string in = argv[5], out = argv[6];
    at::set_num_threads(1);
    auto input = readFloats(in + ".input", {n, c, h, w}).contiguous(torch::MemoryFormat::ChannelsLast).requires_grad_(true);
    const auto grad = readFloats(in + ".grad", {n, c, h / 2, w / 2});
    const auto output = ringmaster::trainer::maxPool2x2Relu(input);
    output.backward(grad);
    writeFloats(out + ".output", output.detach());
    writeFloats(out + ".grad_input", input.grad());
    // Without grad mode the same function takes its forward-only path: it must give the same output.
    torch::NoGradGuard noGrad;
    writeFloats(out + ".output_no_grad", ringmaster::trainer::maxPool2x2Relu(input.detach()));
    std::printf("ok channels_last=%d\n", static_cast<int>(output.is_contiguous(torch::MemoryFormat::ChannelsLast)));
    return 0;
}
