#pragma once
// The few places where LibTorch 1.13 (Debian) and 2.x (CUDA builds) differ, keyed on
// TORCH_VERSION_MAJOR so the rest of the trainer is written once.

#include <chrono>
#include <cstdint>

#include <torch/torch.h>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace ringmaster::compat {

// 1.13: backends (Gloo, NCCL) derive from c10d::ProcessGroup; 2.x: from c10d::Backend.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

// TCPStoreOptions grew fields in 2.x (useLibUV, ...): set the shared ones one by one.
c10d::TCPStoreOptions makeStoreOptions(std::uint16_t port, bool isServer, int worldSize,
                                       std::chrono::milliseconds timeout);

// Drops every gradient (set_to_none), the same on 1.13 (whose zero_grad zeroes in place) and 2.x (whose
// zero_grad detaches in place first, which a gradient that is a view of its bucket refuses). Ringmaster
// overwrites every gradient after its all-reduce, so dropping them is correct and saves a memset.
void zeroGrad(torch::optim::Optimizer& optimizer);

// Ends a process group: shutdown (after pending work) when `clean`, else abort. 2.x backends have both
// (NCCL warns at exit about a group never shut down, and abort frees a rank whose peer died); 1.13's
// CPU-only groups need neither.
void closeGroup(CollectiveBackend& group, bool clean);

// Autocast's per-device switch and lower-precision type (1.13: one function pair per device kind; 2.x: one
// pair taking the device type). Only the CPU and CUDA are asked for.
bool autocastEnabled(c10::DeviceType type);
c10::ScalarType autocastDtype(c10::DeviceType type);
void setAutocast(c10::DeviceType type, bool enabled, c10::ScalarType dtype);

} // namespace ringmaster::compat
