/* A stand-in for libnvidia-ml.so.1 that reports four invented GPUs, so the GPU panel's NVML path is
 * tested on machines without NVIDIA hardware. Compute processes: by default GPU 1 runs one other
 * process (pid 4242); RINGMASTER_FAKE_NVML_PROCESSES="GPU:PID,GPU:PID,..." replaces that list and is
 * read at every query, so a test can put its own ranks' pids on a GPU. The driver reports version 555.42.06.
 * GPU i draws 100 + 10 i W, runs its SMs at 1410 - 10 i MHz and moves 1000 (i + 1) KB/s each way over PCIe. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct FakeDevice { int index; } *nvmlDevice_t;
typedef struct { unsigned long long total, free, used; } nvmlMemory_t;
typedef struct { unsigned gpu, memory; } nvmlUtilization_t;
typedef struct { unsigned pid; unsigned long long usedGpuMemory; } nvmlProcessInfo_v1_t;
typedef struct { unsigned pid; unsigned long long usedGpuMemory; unsigned gpuInstanceId, computeInstanceId; } nvmlProcessInfo_t;

enum { kSuccess = 0, kInvalidArgument = 2, kInsufficientSize = 7, kMaxProcesses = 64 };

static struct FakeDevice devices[4] = {{0}, {1}, {2}, {3}};

int nvmlInit_v2(void) { return kSuccess; }
int nvmlShutdown(void) { return kSuccess; }
int nvmlDeviceGetCount_v2(unsigned* count) { *count = 4; return kSuccess; }
int nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device)
{
    if (index >= 4) return kInvalidArgument;
    *device = &devices[index];
    return kSuccess;
}
int nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length)
{
    snprintf(name, length, "Fake GPU %d", device->index);
    return kSuccess;
}
int nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory)
{
    memory->total = 80ull << 30;
    memory->used = (unsigned long long)(device->index + 1) << 30;
    memory->free = memory->total - memory->used;
    return kSuccess;
}
int nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t* utilization)
{
    utilization->gpu = device->index == 1 ? 97 : 0;
    utilization->memory = 0;
    return kSuccess;
}
int nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned sensor, unsigned* temperature)
{
    (void)sensor;
    *temperature = 40 + (unsigned)device->index;
    return kSuccess;
}

int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned* milliwatts)
{
    *milliwatts = (100u + 10u * (unsigned)device->index) * 1000u;
    return kSuccess;
}
int nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned type, unsigned* mhz)
{
    if (type != 1) return kInvalidArgument; /* NVML_CLOCK_SM only */
    *mhz = 1410u - 10u * (unsigned)device->index;
    return kSuccess;
}
int nvmlDeviceGetPcieThroughput(nvmlDevice_t device, unsigned counter, unsigned* kilobytesPerSecond)
{
    if (counter > 1) return kInvalidArgument;
    *kilobytesPerSecond = 1000u * ((unsigned)device->index + 1u);
    return kSuccess;
}

/* The pids on `device`, from RINGMASTER_FAKE_NVML_PROCESSES (or the default list). */
static unsigned processesOn(nvmlDevice_t device, unsigned pids[kMaxProcesses])
{
    const char* spec = getenv("RINGMASTER_FAKE_NVML_PROCESSES");
    if (!spec) spec = "1:4242";
    unsigned found = 0;
    while (*spec && found < kMaxProcesses) {
        char* end = NULL;
        const long gpu = strtol(spec, &end, 10);
        if (end == spec || *end != ':') break;
        const char* pidText = end + 1;
        const unsigned long pid = strtoul(pidText, &end, 10);
        if (end == pidText) break;
        if (gpu == device->index) pids[found++] = (unsigned)pid;
        spec = *end == ',' ? end + 1 : end;
    }
    return found;
}

/* The NVML contract: with too small a buffer, set *count to the need and return INSUFFICIENT_SIZE. */
#define FILL_PROCESSES(InfoType)                                         \
    unsigned pids[kMaxProcesses];                                        \
    const unsigned found = processesOn(device, pids);                    \
    if (!infos || *count < found) {                                      \
        const int result = found == 0 ? kSuccess : kInsufficientSize;    \
        *count = found;                                                  \
        return result;                                                   \
    }                                                                    \
    for (unsigned i = 0; i < found; ++i) {                               \
        memset(&infos[i], 0, sizeof(InfoType));                          \
        infos[i].pid = pids[i];                                          \
        infos[i].usedGpuMemory = 1ull << 30;                             \
    }                                                                    \
    *count = found;                                                      \
    return kSuccess;

int nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned* count, nvmlProcessInfo_v1_t* infos)
{
    FILL_PROCESSES(nvmlProcessInfo_v1_t)
}
int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned* count, nvmlProcessInfo_t* infos)
{
    FILL_PROCESSES(nvmlProcessInfo_t)
}
int nvmlSystemGetDriverVersion(char* version, unsigned length)
{
    snprintf(version, length, "555.42.06");
    return kSuccess;
}
