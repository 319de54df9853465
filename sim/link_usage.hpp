// Link utilisation from a recorded run: the bytes each link carried, how long it was busy (the union of the intervals
// in which some message crossed it) and that as a fraction of the run, the most utilised first. Links are those of the
// star (each rank's uplink and downlink) or of a cluster's topology, crossed along the same routes the simulation
// used. Links alike (of one kind and capacity, as utilised and as busy) are grouped, so that the one link class that
// bounds a run is not hidden below many copies of a less loaded one.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/executor.hpp"

namespace dtsim {

class Topology;

struct LinkUsage {
  std::string name;  // e.g. "rank 3 up", "nic 5 -> fabric switch 24 (nic)"
  std::string kind;  // the link's class: "host" (a rank's link on the star) or a cluster's (sim/topology.hpp)
  double capacity_Bps = 0.0;
  std::uint64_t bytes = 0;  // carried in the link's direction
  double busy_s = 0.0;
  double busy_fraction = 0.0;                   // busy_s / the run's time
  double utilisation = 0.0;                     // bytes / (capacity * the run's time)
  std::vector<std::pair<double, double>> busy;  // merged busy intervals, seconds
};

// Links alike: of one kind and capacity, and the same utilisation and busy fraction to 0.1%.
struct LinkGroup {
  std::string kind;
  double capacity_Bps = 0.0;
  std::size_t count = 0;       // links in the group
  std::uint64_t bytes = 0;     // the most any of them carried
  double busy_fraction = 0.0;  // the highest of them
  double utilisation = 0.0;    // the highest of them
  std::string first;           // the name of the first of them (in the order of `links`)
};

// `links` (as the functions below return them) grouped into links alike, the most utilised group first.
std::vector<LinkGroup> group_links(const std::vector<LinkUsage>& links);

// The star of the SimGrid executor: rank r's messages leave on "rank r up" and arrive on "rank r down".
std::vector<LinkUsage> star_link_usage(const RunTrace& trace, int ranks, double bandwidth_Bps, double run_s);
// A cluster: position p runs on accelerator accelerator_of[p]; each direction of a topology link is one entry.
std::vector<LinkUsage> cluster_link_usage(const RunTrace& trace, const Topology& topology,
                                          const std::vector<int>& accelerator_of, double run_s);
// A cluster's links from the bytes one step puts on them (`link_bytes` as sim/link_load.hpp's step_link_bytes returns
// them: nothing simulated, so no busy times), utilised over a step of `step_s`; empty where they were not counted.
std::vector<LinkUsage> step_link_usage(const std::vector<double>& link_bytes, const Topology& topology, double step_s);

}  // namespace dtsim
