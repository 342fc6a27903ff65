/* A stand-in for libnvidia-ml.so.1 that reports four invented GPUs (GPU 1 busy with another
 * process), so the GPU panel's NVML path is tested on machines without NVIDIA hardware. */
#include <stdio.h>
#include <string.h>

typedef struct FakeDevice { int index; } *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;

static struct FakeDevice devices[4] = {{0}, {1}, {2}, {3}};

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned* count) { *count = 4; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device)
{
    if (index >= 4) return 2;
    *device = &devices[index];
    return 0;
}
int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length)
{
    snprintf(name, length, "Fake GPU %d", device->index);
    return 0;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory)
{
    memory->total = 80ull << 30;
    memory->used = (unsigned long long)(device->index + 1) << 30;
    memory->free = memory->total - memory->used;
    return 0;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization)
{
    utilization->gpu = device->index == 1 ? 97 : 0;
    utilization->memory = 0;
    return 0;
}
int nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned sensor, unsigned* temperature)
{
    (void)sensor;
    *temperature = 40 + (unsigned)device->index;
    return 0;
}
int nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* count, void* infos)
{
    (void)infos;
    *count = device->index == 1 ? 1 : 0;
    return 0;
}
