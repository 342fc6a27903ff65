// Prints one rank's DistributedSampler shard, for the Python parity test:
//   ringmaster-sampler-dump N WORLD RANK SEED EPOCH DROP_LAST(0|1) SHUFFLE(0|1)
#include <cstdio>
#include <cstdlib>

#include "trainer/sampler.h"

int main(int argc, char** argv)
{
    if (argc != 8) {
        std::fprintf(stderr, "usage: %s N WORLD RANK SEED EPOCH DROP_LAST SHUFFLE\n", argv[0]);
        return 2;
    }
    ringmaster::trainer::DistributedSampler sampler(std::atoll(argv[1]), std::atoi(argv[2]), std::atoi(argv[3]),
                                                    std::atoi(argv[7]) != 0, std::strtoull(argv[4], nullptr, 10),
                                                    std::atoi(argv[6]) != 0);
    sampler.setEpoch(std::atoll(argv[5]));
    const auto indices = sampler.indices();
    const auto* data = indices.data_ptr<std::int64_t>();
    for (std::int64_t i = 0; i < indices.numel(); ++i) std::printf(i ? " %lld" : "%lld", static_cast<long long>(data[i]));
    std::printf("\n");
    return 0;
}
