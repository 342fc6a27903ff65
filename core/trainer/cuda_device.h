#pragma once
// Which CUDA device a rank computes on, from the rank contract and the devices this process sees. Plain C++
// (no LibTorch), so the mapping is tested on machines without a GPU (ringmaster-dist-env-probe device N).
// LOCAL_RANK is the device only when every local rank sees every local GPU (the launcher's and torchrun's
// way: one CUDA_VISIBLE_DEVICES for all). When each rank sees only its own GPU (a launcher that gives each
// rank one entry, srun --gpus-per-task 1, a Kubernetes pod per GPU), the device is that GPU, index 0.

#include <string>

#include "trainer/dist_env.h"

namespace ringmaster::trainer {

struct CudaDeviceChoice
{
    int index = -1;     // the device to select; -1 with `error` set when there is none to choose
    std::string error;  // one line naming the cause and the fix
    std::string reason; // how the index was chosen, for the log
};

CudaDeviceChoice chooseCudaDevice(const DistEnv& env, int visibleDevices);

} // namespace ringmaster::trainer
