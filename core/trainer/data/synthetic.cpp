#include "trainer/data/synthetic.h"

#include <ATen/CPUGeneratorImpl.h>

namespace ringmaster::trainer {

std::pair<LoadedData, LoadedData> makeSyntheticRegression(std::int64_t samples, std::uint64_t seed)
{
    auto generator = at::make_generator<at::CPUGeneratorImpl>(seed);
    const auto trueWeights = torch::arange(1, 11, torch::kFloat32).div_(10.0).unsqueeze(1); // 0.1 .. 1.0
    const double trueBias = 0.5;
    auto make = [&](std::int64_t n) {
        LoadedData split;
        split.inputs = torch::randn({n, 10}, generator, torch::kFloat32);
        split.targets = split.inputs.mm(trueWeights).add_(trueBias).add_(torch::randn({n, 1}, generator).mul_(0.01));
        split.description = "synthetic regression (" + std::to_string(samples) + " train samples)";
        return split;
    };
    auto train = make(samples);
    auto test = make(std::max<std::int64_t>(samples / 4, 1));
    return {std::move(train), std::move(test)};
}

} // namespace ringmaster::trainer
