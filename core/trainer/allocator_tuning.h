#pragma once
// How the C library's allocator treats the tensors a training step allocates and frees.
//
// LibTorch's CPU allocator takes every tensor from malloc. glibc serves blocks above its mmap threshold
// (128 KiB at first) with a fresh mmap and returns them with munmap, and gives freed memory at the top of the
// heap back to the kernel: each step's activations and gradients (0.1-3 MB each for the cnn) then cost page
// faults and the kernel zeroing every page again, step after step (16% of a 1-rank run's samples were in the
// kernel, most of them clear_page and page faults; measured with perf on the cnn, 1 thread). Keeping those
// blocks in the heap made the same run 11-14% faster (docs/performance.md). Tensors larger than the mmap
// threshold set here still come from mmap; memory kept for reuse is bounded by the step's own working set.
//
// Call once, after set-up and before the first step: what loading the data freed goes back to the kernel
// first (malloc_trim), so steady memory is the steps' own and not the loader's leftovers. A value set in
// MALLOC_MMAP_THRESHOLD_, MALLOC_TRIM_THRESHOLD_ or GLIBC_TUNABLES wins. Not glibc: nothing is changed
// (an allocator preloaded in its place, jemalloc or tcmalloc, ignores the call).

namespace ringmaster::trainer {

// Returns true when the thresholds were set here, false when left as they were (the user set them, or the
// C library is not glibc).
bool keepStepMemoryInTheHeap();

} // namespace ringmaster::trainer
