#include "trainer/allocator_tuning.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ringmaster::trainer {
namespace {

// glibc's ceiling for M_MMAP_THRESHOLD on 64-bit (DEFAULT_MMAP_THRESHOLD_MAX): blocks up to 32 MiB come
// from the heap and are reused; larger ones (a whole dataset's float copy, say) still go back at free.
constexpr int kMmapThresholdBytes = 32 * 1024 * 1024;
// Freed memory at the top of the heap is kept up to this much rather than handed back each step.
constexpr int kTrimThresholdBytes = 512 * 1024 * 1024;

bool userTunedMalloc()
{
    if (std::getenv("MALLOC_MMAP_THRESHOLD_") || std::getenv("MALLOC_TRIM_THRESHOLD_")) return true;
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    return tunables && std::strstr(tunables, "glibc.malloc.") != nullptr;
}

} // namespace

bool keepStepMemoryInTheHeap()
{
#if defined(__GLIBC__)
    if (userTunedMalloc()) return false;
    malloc_trim(0);
    // Both, or the first alone turns off glibc's own adjustment and leaves the second at its default.
    return mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1 && mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1;
#else
    return false;
#endif
}

} // namespace ringmaster::trainer
