#pragma once
// Slurm's compressed lists, parsed without asking Slurm: under `srun` every task must find rank 0's host
// (the first host of SLURM_JOB_NODELIST) and its own node's task count (SLURM_TASKS_PER_NODE) on its own,
// and `scontrol` may not be installed on the compute nodes. Pure C++, no LibTorch, so it is tested alone.
//
// Host lists: hosts separated by commas; a host may hold bracket groups of numbers and ranges, e.g.
// "node[01-04,07],gpu-a" is node01 node02 node03 node04 node07 gpu-a. A range keeps the zero padding of
// its lower bound ("x[09-11]" is x09 x10 x11, "x[9-11]" is x9 x10 x11), and several groups multiply
// ("rack[1-2]-n[01-02]" is rack1-n01 rack1-n02 rack2-n01 rack2-n02), the first group varying slowest.
// Task counts: counts separated by commas, "N(xM)" meaning M nodes with N tasks each ("2(x3),1").

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace ringmaster::trainer::slurm {

// Thrown for text that is not a Slurm list; what() says what is wrong with it (not which variable held it).
class ListSyntaxError : public std::invalid_argument
{
public:
    using std::invalid_argument::invalid_argument;
};

// Expansions larger than this are refused rather than filling memory (a cluster has far fewer nodes).
inline constexpr std::size_t kMaxExpandedHosts = 1u << 20;

// The first host of a host list. The whole list is checked, but only the first host is expanded.
std::string firstHost(const std::string& hostlist);

// Every host, in Slurm's order. Throws ListSyntaxError, also when there would be more than maxHosts.
std::vector<std::string> expandHostlist(const std::string& hostlist, std::size_t maxHosts = kMaxExpandedHosts);

// "2(x3),1" -> {2, 2, 2, 1}. Counts are >= 1; throws ListSyntaxError otherwise or beyond maxNodes entries.
std::vector<int> expandTaskCounts(const std::string& text, std::size_t maxNodes = kMaxExpandedHosts);

} // namespace ringmaster::trainer::slurm
