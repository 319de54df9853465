// The load a training step's allreduces put on a cluster's links, from the schedules and the routes alone (nothing
// simulated): the bytes each direction of each link carries in one step. Over the step's time that is each link's
// utilisation, so the class of the most utilised link can be named for every configuration, whichever executor timed
// it (sim/link_usage.hpp measures the same from a recorded run, with busy times).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/schedule.hpp"

namespace dtsim {

class Topology;

// The bytes per step on each direction of each topology link (entry 2 l: link l from a to b; 2 l + 1: from b to a):
// every bucket's transfers from position p to q, on accelerators accelerator_of[p] and accelerator_of[q] (none when
// they are the same), along the routes the executors take. Compact schedules count every repetition (a ring's in O(1)
// per send). Empty when the buckets hold more than `most_transfers` send operations (a repeated step's counted once)
// or 2^22 pairs of accelerators, or more ranks than `accelerator_of` places: the cost stays bounded.
std::vector<double> step_link_bytes(const std::vector<Schedule>& buckets, const Topology& topology,
                                    const std::vector<int>& accelerator_of, std::uint64_t most_transfers = 1ULL << 27);

struct LinkClassLoad {
  std::string link_class;  // the class of the most utilised link ("nic", "pcie", ...); empty: no link carries bytes
  std::size_t links = 0;   // links of that class as utilised as it (to 0.1%), counting each direction
  double utilisation = 0;  // its bytes per step / (capacity x step time)
};

// The most utilised link of `link_bytes` (as step_link_bytes returns them) over a step of `step_s`, and its class.
LinkClassLoad most_utilised_link_class(const std::vector<double>& link_bytes, const Topology& topology, double step_s);

}  // namespace dtsim
