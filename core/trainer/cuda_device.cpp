#include "trainer/cuda_device.h"

namespace ringmaster::trainer {

CudaDeviceChoice chooseCudaDevice(const DistEnv& env, int visibleDevices)
{
    CudaDeviceChoice choice;
    const std::string rank = "LOCAL_RANK " + std::to_string(env.localRank) + " of " + std::to_string(env.localWorldSize);
    if (visibleDevices <= 0) {
        choice.error = "--device cuda: no CUDA device is visible (no GPU, no driver, CUDA_VISIBLE_DEVICES empty, or a "
                       "CPU-only LibTorch); use --device cpu";
    } else if (visibleDevices >= env.localWorldSize) {
        choice.index = env.localRank;
        choice.reason = rank + ": GPU " + std::to_string(env.localRank) + " of the " + std::to_string(visibleDevices) +
                        " visible";
    } else if (visibleDevices == 1) {
        choice.index = 0;
        choice.reason = rank + ": the one GPU this rank sees";
    } else {
        choice.error = rank + " sees " + std::to_string(visibleDevices) + " GPUs, fewer than the " +
                       std::to_string(env.localWorldSize) + " local ranks: give every rank all the node's GPUs, or each "
                       "rank exactly one (CUDA_VISIBLE_DEVICES of one entry, srun --gpus-per-task 1)";
    }
    return choice;
}

} // namespace ringmaster::trainer
