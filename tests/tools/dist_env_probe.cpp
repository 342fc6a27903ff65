// Shows what the trainer makes of its environment and of Slurm's lists, for the Slurm env tests:
//   ringmaster-dist-env-probe env          the rank contract read from this process's environment (JSON)
//   ringmaster-dist-env-probe hosts LIST   every host of a Slurm host list, one per line
//   ringmaster-dist-env-probe first LIST   the first host only
//   ringmaster-dist-env-probe tasks TEXT   a tasks-per-node list ("2(x3),1"), counts separated by spaces
//   ringmaster-dist-env-probe device N     the CUDA device this rank would select when it sees N devices
// Errors print one line on stderr and exit 2, as the trainer does.
#include <cstdio>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "trainer/cuda_device.h"
#include "trainer/dist_env.h"
#include "trainer/errors.h"
#include "trainer/slurm_hostlist.h"

namespace rt = ringmaster::trainer;

int main(int argc, char** argv)
{
    const std::string mode = argc >= 2 ? argv[1] : "";
    if (!((mode == "env" && argc == 2) || ((mode == "hosts" || mode == "first" || mode == "tasks" || mode == "device") && argc == 3))) {
        std::fprintf(stderr, "usage: %s env | hosts LIST | first LIST | tasks TEXT | device N\n", argv[0]);
        return 2;
    }
    try {
        if (mode == "env") {
            const rt::DistEnv env = rt::readDistEnv();
            std::cout << nlohmann::json{{"rank", env.rank},
                                        {"local_rank", env.localRank},
                                        {"world_size", env.worldSize},
                                        {"local_world_size", env.localWorldSize},
                                        {"master_addr", env.masterAddr},
                                        {"master_port", env.masterPort},
                                        {"derived_from_slurm", env.derivedFromSlurm}}
                             .dump()
                      << "\n";
        } else if (mode == "hosts") {
            for (const auto& host : rt::slurm::expandHostlist(argv[2])) std::cout << host << "\n";
        } else if (mode == "device") {
            const auto choice = rt::chooseCudaDevice(rt::readDistEnv(), std::stoi(argv[2]));
            if (!choice.error.empty()) throw rt::UsageError(choice.error);
            std::cout << choice.index << "\n";
        } else if (mode == "first") {
            std::cout << rt::slurm::firstHost(argv[2]) << "\n";
        } else {
            const auto counts = rt::slurm::expandTaskCounts(argv[2]);
            for (std::size_t i = 0; i < counts.size(); ++i) std::cout << (i ? " " : "") << counts[i];
            std::cout << "\n";
        }
    } catch (const std::exception& e) { // UsageError, slurm::ListSyntaxError
        std::fprintf(stderr, "error: %s\n", e.what());
        return 2;
    }
    return 0;
}
