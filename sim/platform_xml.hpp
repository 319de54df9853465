// The cluster as a SimGrid platform file (DTD version 4.1) for people who use SimGrid directly: one full zone with a
// host per accelerator (speed: the node's reduce rate, in bytes per second), a split-duplex link per topology link,
// and the explicit route of every ordered pair of accelerators, the same routes dtsim simulates.
#pragma once

#include <ostream>

#include "sim/topology.hpp"

namespace dtsim {

// Pairs beyond this many routes make files too large to be useful; write_platform_xml refuses them.
inline constexpr long long max_xml_routes = 1LL << 20;

// Throws std::invalid_argument when the cluster has more than max_xml_routes ordered pairs.
void write_platform_xml(const Topology& topology, std::ostream& out);

}  // namespace dtsim
