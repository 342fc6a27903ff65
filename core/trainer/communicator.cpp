#include "trainer/communicator.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef RINGMASTER_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#ifdef RINGMASTER_EXPECTED_NCCL_VERSION_CODE
#include <nccl.h>
// ProcessGroupNCCL::Options embeds ncclConfig_t, whose layout depends on the NCCL version: the nccl.h this
// file sees must be the one libtorch_cuda was built with (cmake/RingmasterTorch.cmake finds and checks it).
static_assert(NCCL_VERSION_CODE == RINGMASTER_EXPECTED_NCCL_VERSION_CODE,
              "nccl.h is not the NCCL version LibTorch was built with (see cmake/RingmasterTorch.cmake)");
#endif
#endif

#include "trainer/errors.h"
#include "trainer/log.h"
#include "trainer/store_listener.h"

namespace ringmaster::trainer {
namespace {

std::shared_ptr<::gloo::transport::Device> makeGlooDevice(const std::string& masterAddr)
{
    // The C++ API ignores GLOO_SOCKET_IFNAME, unlike Python's init_process_group: honour it here.
    if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname) {
        return c10d::ProcessGroupGloo::createDeviceForInterface(ifname);
    }
    if (masterAddr == "127.0.0.1" || masterAddr == "localhost" || masterAddr == "::1") {
        return c10d::ProcessGroupGloo::createDeviceForHostname(masterAddr);
    }
    return c10d::ProcessGroupGloo::createDefaultDevice();
}

// The TCPStore server's wording of EADDRINUSE: "Address already in use" / "errno: 98" up to 2.3,
// "address already in use" with "code: -98, name: EADDRINUSE" since 2.4.
bool reportsAddressInUse(std::string message)
{
    std::transform(message.begin(), message.end(), message.begin(), [](unsigned char c) { return std::tolower(c); });
    return message.find("address already in use") != std::string::npos || message.find("eaddrinuse") != std::string::npos ||
           message.find("errno: 98") != std::string::npos;
}

c10::intrusive_ptr<c10d::Store> rendezvous(const DistEnv& env, std::chrono::milliseconds timeout)
{
    const bool isServer = env.rank == 0;
    auto options = compat::makeStoreOptions(env.masterPort, isServer, env.worldSize, timeout);
    const std::string where = env.masterAddr + ":" + std::to_string(env.masterPort);
    try {
        // The store's server listens on MASTER_ADDR's address only, never every interface (store_listener.h).
#if TORCH_VERSION_MAJOR >= 2
        if (isServer) {
            options.masterListenFd = listenForStore(env.masterAddr, env.masterPort, env.localWorldSize != env.worldSize);
            // Some 2.x releases' libuv server refuses a listening socket handed over (NotImplementedError); the
            // classic server takes it in every release that has masterListenFd.
            options.useLibUV = false;
        }
        auto store = c10::make_intrusive<c10d::TCPStore>(env.masterAddr, options);
#else
        std::unique_ptr<StoreBindScope> bindScope = isServer ? std::make_unique<StoreBindScope>(env.masterAddr, env.localWorldSize != env.worldSize) : nullptr;
        auto store = c10::make_intrusive<c10d::TCPStore>(env.masterAddr, options);
        bindScope.reset();
#endif
        return c10::make_intrusive<c10d::PrefixStore>("ringmaster", store);
    } catch (const std::exception& e) {
        const std::string message = e.what();
        // Only EADDRINUSE is "taken by another program"; EACCES (a port below 1024) and EADDRNOTAVAIL
        // (an address not on this host) are the job's own mistakes and fail as such.
        if (isServer && reportsAddressInUse(message)) {
            throw AddressInUseError("MASTER_PORT " + std::to_string(env.masterPort) + " is already in use on " +
                             env.masterAddr + ": choose a free port (ringmaster-launch --master-port 0 picks one)");
        }
        throw std::runtime_error("rendezvous at " + where + " failed after at most " +
                                 std::to_string(timeout.count() / 1000) + " s (rank " + std::to_string(env.rank) +
                                 " of " + std::to_string(env.worldSize) +
                                 "; did every rank start? raise --rendezvous-timeout if startup is slow): " +
                                 message.substr(0, message.find('\n')));
    }
}

} // namespace

Communicator::Communicator(const DistEnv& env, const CommunicatorOptions& options)
    : m_rank(env.rank)
    , m_worldSize(env.worldSize)
    , m_forceGroup(options.forceGroup)
    , m_sameHost(env.localWorldSize == env.worldSize)
    , m_backend(options.backend)
{
    if (m_backend == "nccl") {
#ifndef RINGMASTER_HAVE_NCCL
        throw UsageError("--backend nccl: this ringmaster-trainer was built against a LibTorch without CUDA/NCCL; "
                         "use --backend gloo, or rebuild against a CUDA LibTorch (scripts/gpu-check.sh)");
#endif
    }
    if (!distributed()) return;

    m_store = rendezvous(env, options.rendezvousTimeout);
    if (m_backend == "gloo") {
        auto glooOptions = c10d::ProcessGroupGloo::Options::create(options.collectiveTimeout);
        glooOptions->devices.push_back(makeGlooDevice(env.masterAddr));
        m_group = c10::make_intrusive<c10d::ProcessGroupGloo>(m_store, m_rank, m_worldSize, glooOptions);
    } else {
#ifdef RINGMASTER_HAVE_NCCL
        // How a failure ends was set before any thread started (device_setup.h, setCudaEnvironment).
        auto ncclOptions = c10d::ProcessGroupNCCL::Options::create();
        ncclOptions->timeout = options.collectiveTimeout;
        auto nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(m_store, m_rank, m_worldSize, ncclOptions);
        // Bound to this rank's device: no collective guesses the device (rank % GPUs, wrong when each rank sees
        // only its own GPU). connect() then makes the communicator at once.
        nccl->setBoundDeviceId(options.device);
        m_group = nccl;
        m_device = options.device;
#endif
    }
}

Communicator::~Communicator()
{
    close(false);
}

void Communicator::connect()
{
#ifdef RINGMASTER_HAVE_NCCL
    // NCCL makes its communicator at the first collective unless asked now: a peer that cannot connect then
    // fails the start, with its own message, not step 1.
    if (m_backend == "nccl" && m_group) {
        try {
            static_cast<c10d::ProcessGroupNCCL&>(*m_group).eagerConnectSingleDevice(m_device);
        } catch (const std::exception& e) {
            const std::string message = e.what();
            throw std::runtime_error("NCCL could not connect rank " + std::to_string(m_rank) + " on " + m_device.str() +
                                     ": " + message.substr(0, message.find('\n')));
        }
    }
#endif
}

void Communicator::close(bool clean)
{
    if (m_closed || !m_group) return;
    m_closed = true;
    try {
        compat::closeGroup(*m_group, clean);
    } catch (const std::exception& e) {
        log::debug("closing the {} group: {}", m_backend, oneLineMessage(e));
    }
}

c10::intrusive_ptr<c10d::Work> Communicator::allreduceSumAsync(torch::Tensor& tensor)
{
    if (!distributed()) return {};
    std::vector<torch::Tensor> tensors{tensor};
    return m_group->allreduce(tensors, c10d::AllreduceOptions{});
}

void Communicator::allreduceSum(torch::Tensor& tensor)
{
    waitWork(allreduceSumAsync(tensor), "all-reduce");
}

void Communicator::broadcastFromRankZero(torch::nn::Module& module)
{
    std::vector<torch::Tensor> tensors;
    for (auto& param : module.parameters()) tensors.push_back(param);
    for (auto& buffer : module.buffers()) tensors.push_back(buffer);
    broadcastInPlace(tensors);
}

void Communicator::broadcastBuffersFromRankZero(torch::nn::Module& module)
{
    broadcastInPlace(module.buffers());
}

void Communicator::broadcastInPlace(const std::vector<torch::Tensor>& tensors)
{
    if (!distributed() || tensors.empty()) return;
    torch::NoGradGuard noGrad; // in-place writes into leaf parameters
    // Coalesced, as PyTorch DDP's _broadcast_coalesced: the tensors of one element type are flattened into
    // buffers of up to kBroadcastChunkBytes, each broadcast once and copied back, rather than one round trip per
    // tensor (three per batch-norm layer, every step). Every rank holds the same tensors in the same order, so
    // every rank forms the same chunks.
    std::vector<c10::ScalarType> types;
    for (const auto& tensor : tensors) {
        if (std::find(types.begin(), types.end(), tensor.scalar_type()) == types.end()) types.push_back(tensor.scalar_type());
    }
    for (const auto type : types) {
        std::vector<torch::Tensor> chunk;
        std::size_t bytes = 0;
        for (const auto& tensor : tensors) {
            if (tensor.scalar_type() != type) continue;
            chunk.push_back(tensor);
            bytes += static_cast<std::size_t>(tensor.nbytes());
            if (bytes >= kBroadcastChunkBytes) {
                broadcastChunk(chunk);
                chunk.clear();
                bytes = 0;
            }
        }
        if (!chunk.empty()) broadcastChunk(chunk);
    }
}

void Communicator::broadcastChunk(const std::vector<torch::Tensor>& chunk)
{
    std::vector<torch::Tensor> flat;
    for (const auto& tensor : chunk) flat.push_back(tensor.reshape({-1}));
    // Gloo wants one dense, default-layout tensor, which cat makes whatever the members' layouts.
    std::vector<torch::Tensor> one{torch::cat(flat)};
    c10d::BroadcastOptions broadcastOptions;
    broadcastOptions.rootRank = 0;
    waitWork(m_group->broadcast(one, broadcastOptions), "parameter broadcast");
    if (m_rank == 0) return; // it sent its own values
    std::int64_t offset = 0;
    for (const auto& tensor : chunk) {
        auto target = tensor; // a handle on the same storage
        target.copy_(one.front().narrow(0, offset, tensor.numel()).view(tensor.sizes()));
        offset += tensor.numel();
    }
}

std::string Communicator::shareString(const std::string& key, const std::string& value)
{
    if (!distributed()) return value;
    if (m_rank == 0) m_store->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
    const auto bytes = m_store->get(key);
    return std::string(bytes.begin(), bytes.end());
}

void Communicator::barrier()
{
    if (!distributed()) return;
    waitWork(m_group->barrier(c10d::BarrierOptions{}), "barrier");
}

void waitWork(const c10::intrusive_ptr<c10d::Work>& work, const char* what)
{
    if (!work) return;
    try {
        work->wait();
    } catch (const std::exception& e) {
        const std::string message = e.what();
        throw std::runtime_error(std::string(what) + " failed (a peer rank died, hung past --collective-timeout, "
                                 "or the network broke): " + message.substr(0, message.find('\n')));
    }
}

} // namespace ringmaster::trainer
