#include "trainer/compat.h"

#include <ATen/autocast_mode.h>

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
    // By hand on both: 2.x's zero_grad(set_to_none) detaches each gradient in place first, which a view of a
    // gradient bucket (grad_sync.h) refuses.
    for (auto& group : optimizer.param_groups()) {
        for (auto& param : group.params()) {
            if (param.mutable_grad().defined()) param.mutable_grad().reset();
        }
    }
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

bool autocastEnabled(c10::DeviceType type)
{
#if TORCH_VERSION_MAJOR >= 2
    return at::autocast::is_autocast_enabled(type);
#else
    return type == c10::DeviceType::CUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
#endif
}

c10::ScalarType autocastDtype(c10::DeviceType type)
{
#if TORCH_VERSION_MAJOR >= 2
    return at::autocast::get_autocast_dtype(type);
#else
    return type == c10::DeviceType::CUDA ? at::autocast::get_autocast_gpu_dtype() : at::autocast::get_autocast_cpu_dtype();
#endif
}

void setAutocast(c10::DeviceType type, bool enabled, c10::ScalarType dtype)
{
#if TORCH_VERSION_MAJOR >= 2
    at::autocast::set_autocast_dtype(type, dtype);
    at::autocast::set_autocast_enabled(type, enabled);
#else
    if (type == c10::DeviceType::CUDA) {
        at::autocast::set_autocast_gpu_dtype(dtype);
        at::autocast::set_enabled(enabled);
    } else {
        at::autocast::set_autocast_cpu_dtype(dtype);
        at::autocast::set_cpu_enabled(enabled);
    }
#endif
}

} // namespace ringmaster::compat
