#include "trainer/stop_signal.h"

#include <atomic>
#include <csignal>

namespace ringmaster::trainer {
namespace {

std::atomic<int> g_stopSignal{0};
std::atomic<bool> g_checkpointRequested{false};

extern "C" void onCheckpointSignal(int)
{
    g_checkpointRequested.store(true);
}

extern "C" void onStopSignal(int signal)
{
    int expected = 0;
    if (!g_stopSignal.compare_exchange_strong(expected, signal)) {
        std::signal(signal, SIG_DFL); // second request: die now
        std::raise(signal);
    }
}

} // namespace

void installStopHandlers()
{
    struct sigaction action{};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
    struct sigaction checkpoint{};
    checkpoint.sa_handler = onCheckpointSignal;
    sigemptyset(&checkpoint.sa_mask);
    checkpoint.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &checkpoint, nullptr);
}

bool takeCheckpointRequest()
{
    return g_checkpointRequested.exchange(false);
}

bool stopRequested()
{
    return g_stopSignal.load() != 0;
}

int stopSignal()
{
    return g_stopSignal.load();
}

} // namespace ringmaster::trainer
