#include "shm_allreduce.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/mman.h>
#include <unistd.h>

#include "communicator.h"

namespace ringmaster::trainer {
namespace {

constexpr std::size_t kHeaderBytes = 64 * 1024; // room for 1,000 rank cells
constexpr std::size_t kCellBytes = 64;          // one cache line per rank: no false sharing
constexpr int kSpinsBeforeSleeping = 4000;
constexpr auto kSleep = std::chrono::microseconds(20);
constexpr auto kLivenessEvery = std::chrono::milliseconds(100);

// A peer is gone when no such process exists or it is a zombie its parent has not reaped yet
// (torchrun polls its children only every few seconds).
bool peerDead(pid_t pid)
{
    if (pid <= 0) return false;
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    std::FILE* stat = std::fopen(path, "r");
    if (!stat) return true;
    char text[512] = {};
    const std::size_t length = std::fread(text, 1, sizeof text - 1, stat);
    std::fclose(stat);
    const char* close = std::strrchr(text, ')');
    return length > 0 && close && (close[2] == 'Z' || close[2] == 'X');
}

std::string randomSuffix()
{
    std::random_device device;
    return std::to_string(::getpid()) + "-" + std::to_string(device());
}

} // namespace

struct ShmAllreduce::Cell
{
    std::atomic<std::uint64_t> arrived; // sequence number whose data this rank has put in its slot
    std::atomic<std::uint64_t> finished; // sequence number whose slots this rank has finished reading
    std::int64_t pid;
};
static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free);

std::unique_ptr<ShmAllreduce> ShmAllreduce::create(Communicator& communicator, std::int64_t capacityFloats,
                                                   std::chrono::milliseconds timeout)
{
    const int rank = communicator.rank();
    const int world = communicator.worldSize();
    const std::size_t bytes = kHeaderBytes + static_cast<std::size_t>(world) * static_cast<std::size_t>(capacityFloats) * sizeof(float);
    std::string name;
    if (rank == 0) name = "/ringmaster-" + randomSuffix();
    name = communicator.shareString("shm-allreduce-name", name);

    void* base = MAP_FAILED;
    std::string problem;
    const int fd = rank == 0 ? ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600) : -1;
    if (rank == 0) {
        // Reserve the memory now: a /dev/shm too small for it fails here, not with SIGBUS mid-run.
        if (fd < 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0 || ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)) != 0) {
            problem = "cannot create " + std::to_string(bytes) + " bytes in /dev/shm: " + std::strerror(errno);
        }
    }
    communicator.barrier(); // the segment exists (or rank 0 failed) before the others open it
    const int attached = rank == 0 ? fd : ::shm_open(name.c_str(), O_RDWR, 0600);
    if (problem.empty() && attached >= 0) {
        base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, attached, 0);
        if (base == MAP_FAILED) problem = std::string("mmap: ") + std::strerror(errno);
    } else if (problem.empty()) {
        problem = std::string("shm_open: ") + std::strerror(errno);
    }
    if (attached >= 0) ::close(attached);

    // Every rank must agree, or one would wait in shared memory while another uses the backend.
    auto ok = torch::tensor({problem.empty() ? 1.0f : 0.0f});
    communicator.allreduceSum(ok);
    communicator.barrier(); // everyone has opened it: the name can go, the mapping stays
    if (rank == 0) ::shm_unlink(name.c_str());
    if (ok.item<float>() < world) {
        if (base != MAP_FAILED) ::munmap(base, bytes);
        spdlog::warn("shared-memory all-reduce unavailable ({}): using the {} backend for gradients",
                     problem.empty() ? "another rank could not set it up" : problem, communicator.backendName());
        return nullptr;
    }
    return std::unique_ptr<ShmAllreduce>(new ShmAllreduce(base, bytes, rank, world, capacityFloats, timeout));
}

ShmAllreduce::ShmAllreduce(void* base, std::size_t bytes, int rank, int worldSize, std::int64_t capacity,
                           std::chrono::milliseconds timeout)
    : m_base(base)
    , m_bytes(bytes)
    , m_rank(rank)
    , m_worldSize(worldSize)
    , m_capacity(capacity)
    , m_timeout(timeout)
{
    static_assert(sizeof(Cell) <= kCellBytes);
    cell(rank).pid = ::getpid();
}

ShmAllreduce::~ShmAllreduce()
{
    ::munmap(m_base, m_bytes);
}

ShmAllreduce::Cell& ShmAllreduce::cell(int rank) const
{
    return *reinterpret_cast<Cell*>(static_cast<char*>(m_base) + static_cast<std::size_t>(rank) * kCellBytes);
}

float* ShmAllreduce::slot(int rank) const
{
    return reinterpret_cast<float*>(static_cast<char*>(m_base) + kHeaderBytes) + rank * m_capacity;
}

void ShmAllreduce::waitForAll(bool finishedField, std::uint64_t target) const
{
    const auto start = std::chrono::steady_clock::now();
    auto nextLivenessCheck = start + kLivenessEvery;
    for (int peer = 0; peer < m_worldSize; ++peer) {
        if (peer == m_rank) continue;
        Cell& other = cell(peer);
        auto& counter = finishedField ? other.finished : other.arrived;
        for (int spins = 0; counter.load(std::memory_order_acquire) < target; ++spins) {
            if (spins < kSpinsBeforeSleeping) {
                ::sched_yield();
                continue;
            }
            std::this_thread::sleep_for(kSleep);
            const auto now = std::chrono::steady_clock::now();
            if (now < nextLivenessCheck) continue;
            nextLivenessCheck = now + kLivenessEvery;
            const auto pid = static_cast<pid_t>(other.pid);
            if (peerDead(pid)) {
                throw std::runtime_error("shared-memory all-reduce failed (a peer rank died: rank " + std::to_string(peer) +
                                         ", pid " + std::to_string(pid) + ")");
            }
            if (now - start > m_timeout) {
                throw std::runtime_error("shared-memory all-reduce failed (a peer rank died, hung past --collective-timeout, "
                                         "or stopped): rank " + std::to_string(peer) + " never arrived");
            }
        }
    }
}

void ShmAllreduce::sumInPlace(torch::Tensor& tensor)
{
    TORCH_CHECK(tensor.is_contiguous() && tensor.scalar_type() == torch::kFloat32 && tensor.device().is_cpu() &&
                    tensor.numel() <= m_capacity, "shared-memory all-reduce takes contiguous float32 CPU tensors");
    const std::uint64_t sequence = ++m_sequence;
    const auto count = static_cast<std::size_t>(tensor.numel());
    float* data = tensor.data_ptr<float>();
    waitForAll(true, sequence - 1); // every peer has finished reading the previous round's slots
    std::memcpy(slot(m_rank), data, count * sizeof(float));
    cell(m_rank).arrived.store(sequence, std::memory_order_release);
    waitForAll(false, sequence);
    // Rank order on every rank: the same additions in the same order, so bit-identical results.
    std::memcpy(data, slot(0), count * sizeof(float));
    for (int peer = 1; peer < m_worldSize; ++peer) {
        const float* other = slot(peer);
        for (std::size_t i = 0; i < count; ++i) data[i] += other[i];
    }
    cell(m_rank).finished.store(sequence, std::memory_order_release);
}

} // namespace ringmaster::trainer
