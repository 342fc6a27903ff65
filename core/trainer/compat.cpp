#include "compat.h"

namespace ringmaster::compat {

c10d::TCPStoreOptions makeStoreOptions(std::uint16_t port, bool isServer, int worldSize,
                                       std::chrono::milliseconds timeout)
{
    c10d::TCPStoreOptions options;
    options.port = port;
    options.isServer = isServer;
    options.numWorkers = static_cast<std::size_t>(worldSize);
    options.waitWorkers = true;
    options.timeout = timeout;
    return options;
}

void zeroGrad(torch::optim::Optimizer& optimizer)
{
#if TORCH_VERSION_MAJOR >= 2
    optimizer.zero_grad(/*set_to_none=*/true);
#else
    for (auto& group : optimizer.param_groups()) {
        for (auto& param : group.params()) {
            if (param.mutable_grad().defined()) {
                param.mutable_grad().reset();
            }
        }
    }
#endif
}

void closeGroup(CollectiveBackend& group, bool clean)
{
#if TORCH_VERSION_MAJOR >= 2
    if (clean) group.shutdown();
    else group.abort();
#else
    (void)group;
    (void)clean;
#endif
}

} // namespace ringmaster::compat
