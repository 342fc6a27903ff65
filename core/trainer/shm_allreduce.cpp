#include "trainer/shm_allreduce.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trainer/communicator.h"
#include "trainer/errors.h"
#include "trainer/log.h"

namespace ringmaster::trainer {
namespace {

constexpr std::size_t kCellBytes = 64; // one cache line per rank: no false sharing
constexpr std::size_t kHeaderBytes = ShmAllreduce::kMaxRanks * kCellBytes;
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
    // The state follows the last ')': the command name in parentheses may itself hold ')' or spaces.
    const char* close = std::strrchr(text, ')');
    return length > 0 && close && close[1] == ' ' && (close[2] == 'Z' || close[2] == 'X');
}

std::string randomSuffix()
{
    std::random_device device;
    return std::to_string(::getpid()) + "-" + std::to_string(device());
}

// Rank 0 owns the segment's name from the moment it created it: the name is removed when set-up is
// over or when anything in it throws, so no path leaves a segment behind in /dev/shm.
class SegmentName
{
public:
    explicit SegmentName(std::string name) : m_name(std::move(name)) {}
    ~SegmentName() { unlink(); }
    SegmentName(const SegmentName&) = delete;
    SegmentName& operator=(const SegmentName&) = delete;
    void own() { m_owned = true; }
    void unlink()
    {
        if (m_owned) ::shm_unlink(m_name.c_str());
        m_owned = false;
    }

private:
    std::string m_name;
    bool m_owned = false;
};

// A mapping that is released unless set-up succeeds and hands it over.
class Mapping
{
public:
    explicit Mapping(std::size_t bytes) : m_bytes(bytes) {}
    ~Mapping()
    {
        if (m_base != MAP_FAILED) ::munmap(m_base, m_bytes);
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    bool map(int fd)
    {
        m_base = ::mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        return m_base != MAP_FAILED;
    }
    bool mapped() const { return m_base != MAP_FAILED; }
    void* base() const { return m_base; }
    void* release()
    {
        void* base = m_base;
        m_base = MAP_FAILED;
        return base;
    }

private:
    std::size_t m_bytes;
    void* m_base = MAP_FAILED;
};

class FileDescriptor
{
public:
    explicit FileDescriptor(int fd) : m_fd(fd) {}
    ~FileDescriptor()
    {
        if (m_fd >= 0) ::close(m_fd);
    }
    FileDescriptor(const FileDescriptor&) = delete;
    FileDescriptor& operator=(const FileDescriptor&) = delete;
    int get() const { return m_fd; }

private:
    int m_fd;
};

} // namespace

// Lives in the segment, so every field is a lock-free atomic: peers in other processes read them.
struct ShmAllreduce::Cell
{
    std::atomic<std::uint64_t> arrived;  // sequence number whose data this rank has put in its slot
    std::atomic<std::uint64_t> finished; // sequence number whose slots this rank has finished reading
    std::atomic<std::int64_t> pid;       // published during set-up, before any peer can wait on it
    std::atomic<std::int64_t> count;     // floats in this round's slot (published before `arrived`)
    std::atomic<std::uint64_t> tag;      // the caller's name for this round's buffer (idem)
};
static_assert(sizeof(std::atomic<std::uint64_t>) == 8 && std::atomic<std::uint64_t>::is_always_lock_free);
static_assert(std::atomic<std::int64_t>::is_always_lock_free);

void ShmAllreduce::requireSupportedWorldSize(int worldSize)
{
    if (worldSize > kMaxRanks) {
        throw UsageError("--local-allreduce shm: " + std::to_string(worldSize) + " ranks on one host, but the "
                         "shared-memory all-reduce has cells for at most " + std::to_string(kMaxRanks) +
                         ": use --local-allreduce gloo");
    }
}

std::unique_ptr<ShmAllreduce> ShmAllreduce::create(Communicator& communicator, std::int64_t capacityFloats,
                                                   std::chrono::milliseconds timeout)
{
    const int rank = communicator.rank();
    const int world = communicator.worldSize();
    requireSupportedWorldSize(world); // every rank has the same world size: all throw, none waits
    const std::size_t bytes = kHeaderBytes + static_cast<std::size_t>(world) * static_cast<std::size_t>(capacityFloats) * sizeof(float);
    std::string name;
    if (rank == 0) name = "/ringmaster-" + randomSuffix();
    name = communicator.shareString("shm-allreduce-name", name);

    SegmentName segmentName(name);
    std::string problem;
    if (rank == 0) {
        FileDescriptor created(::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600));
        if (created.get() < 0) {
            problem = std::string("shm_open: ") + std::strerror(errno);
        } else {
            segmentName.own();
            // Reserve the memory now: a /dev/shm too small for it fails here, not with SIGBUS mid-run.
            // posix_fallocate returns its error; it does not set errno.
            if (::ftruncate(created.get(), static_cast<off_t>(bytes)) != 0) {
                problem = "cannot size " + std::to_string(bytes) + " bytes in /dev/shm: " + std::strerror(errno);
            } else if (const int error = ::posix_fallocate(created.get(), 0, static_cast<off_t>(bytes)); error != 0) {
                problem = "cannot reserve " + std::to_string(bytes) + " bytes in /dev/shm: " + std::strerror(error);
            }
        }
    }
    communicator.barrier(); // the segment exists (or rank 0 failed) before the others open it
    // Rank 0's verdict before anyone maps: a segment it could not size would SIGBUS on the first touch.
    const std::string verdict = communicator.shareString("shm-allreduce-setup", problem.empty() ? "ok" : "failed: " + problem);
    if (rank != 0 && verdict != "ok") problem = "rank 0 " + verdict;

    Mapping mapping(bytes);
    if (problem.empty()) {
        FileDescriptor attached(::shm_open(name.c_str(), O_RDWR, 0600));
        struct stat status {};
        if (attached.get() < 0) {
            problem = std::string("shm_open: ") + std::strerror(errno);
        } else if (::fstat(attached.get(), &status) != 0 || static_cast<std::size_t>(status.st_size) < bytes) {
            problem = "the segment is smaller than the " + std::to_string(bytes) + " bytes it needs";
        } else if (!mapping.map(attached.get())) {
            problem = std::string("mmap: ") + std::strerror(errno);
        }
    }
    if (mapping.mapped()) {
        // Published before the agreement below: once any rank can wait on this one, its pid is there,
        // so a peer that dies is seen within kLivenessEvery, never only at the timeout.
        auto* cells = static_cast<char*>(mapping.base());
        reinterpret_cast<Cell*>(cells + static_cast<std::size_t>(rank) * kCellBytes)->pid.store(::getpid(), std::memory_order_release);
    }

    // Every rank must agree, or one would wait in shared memory while another uses the backend.
    auto ok = torch::tensor({problem.empty() ? 1.0f : 0.0f});
    communicator.allreduceSum(ok);
    communicator.barrier(); // everyone has opened it: the name can go, the mapping stays
    segmentName.unlink();
    if (ok.item<float>() < world) {
        log::warn("shared-memory all-reduce unavailable ({}): using the {} backend for gradients",
                     problem.empty() ? "another rank could not set it up" : problem, communicator.backendName());
        return nullptr;
    }
    return std::unique_ptr<ShmAllreduce>(new ShmAllreduce(mapping.release(), bytes, rank, world, capacityFloats, timeout));
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
            const auto pid = static_cast<pid_t>(other.pid.load(std::memory_order_acquire));
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

void ShmAllreduce::requireSameBuffer(std::uint64_t tag, std::int64_t count) const
{
    // Called after waitForAll(arrived): the acquire there makes each peer's count and tag visible.
    for (int peer = 0; peer < m_worldSize; ++peer) {
        const Cell& other = cell(peer);
        const auto otherCount = other.count.load(std::memory_order_relaxed);
        const auto otherTag = other.tag.load(std::memory_order_relaxed);
        if (otherCount == count && otherTag == tag) continue;
        throw std::runtime_error(
            "shared-memory all-reduce failed (the ranks reduce different buffers): rank " + std::to_string(m_rank) +
            " reduces buffer " + std::to_string(tag) + " of " + std::to_string(count) + " floats but rank " +
            std::to_string(peer) + " reduces buffer " + std::to_string(otherTag) + " of " + std::to_string(otherCount) +
            " floats; the ranks' gradient buckets diverged: every rank needs the same --model and --bucket-mb");
    }
}

void ShmAllreduce::sumInPlace(torch::Tensor& tensor, std::uint64_t tag)
{
    TORCH_CHECK(tensor.is_contiguous() && tensor.scalar_type() == torch::kFloat32 && tensor.device().is_cpu(),
                "shared-memory all-reduce takes contiguous float32 CPU tensors");
    if (tensor.numel() > m_capacity) {
        throw std::runtime_error("shared-memory all-reduce: a buffer of " + std::to_string(tensor.numel()) +
                                 " floats does not fit the segment's slots of " + std::to_string(m_capacity));
    }
    const std::uint64_t sequence = ++m_sequence;
    const auto count = static_cast<std::size_t>(tensor.numel());
    float* data = tensor.data_ptr<float>();
    waitForAll(true, sequence - 1); // every peer has finished reading the previous round's slots
    std::memcpy(slot(m_rank), data, count * sizeof(float));
    Cell& mine = cell(m_rank);
    mine.count.store(tensor.numel(), std::memory_order_relaxed);
    mine.tag.store(tag, std::memory_order_relaxed);
    mine.arrived.store(sequence, std::memory_order_release);
    waitForAll(false, sequence);
    requireSameBuffer(tag, tensor.numel());
    // Rank order on every rank: the same additions in the same order, so bit-identical results.
    std::memcpy(data, slot(0), count * sizeof(float));
    for (int peer = 1; peer < m_worldSize; ++peer) {
        const float* other = slot(peer);
        for (std::size_t i = 0; i < count; ++i) data[i] += other[i];
    }
    mine.finished.store(sequence, std::memory_order_release);
}

} // namespace ringmaster::trainer
