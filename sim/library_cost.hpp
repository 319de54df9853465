// The collective library's costs as the executors charge them (models/collective_library.hpp says what they are):
// resolved once per segment from the Schedule's protocol, the network's library and where the segment's positions
// run, and then read in the engines' hot paths as plain numbers.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "algorithms/schedule.hpp"
#include "models/collective_library.hpp"
#include "sim/network.hpp"

namespace dtsim {

struct SegmentLibraryCost {
  bool active = false;                         // the segment runs in a protocol: the terms below apply
  double start_s = 0;                          // launch + base latency, before the segment's first step
  std::array<double, 3> wire_factor{1, 1, 1};  // by HopClass: wire bytes per payload byte (1 / payload fraction)
  double rate_cap_Bps = 0;                     // a message's payload rate at most this (0: none)
  std::array<double, 3> hop_latency_s{};       // by HopClass: how long after a message lands its receiver sees it
};

// The hardware a message between positions `src` and `dst` of a schedule crosses: the network between nodes (and on
// the star), NVLink or PCIe inside one, by the node's interconnect.
HopClass hop_class(const NetworkCost& cost, int src, int dst);

// The family of NCCL's tables an algorithm's Schedule belongs to (trees or rings).
LibraryAlgorithm library_algorithm(const Schedule& s);

// What a segment in s.protocol costs on this network (inactive when the protocol is none or there is no library).
SegmentLibraryCost segment_library_cost(const NetworkCost& cost, const Schedule& s);

// The call as the library's tuner sees it: the Schedule's longest rank in steps and bytes sent, the slowest hardware
// its messages cross and that hardware's bandwidth, the nodes it spans.
LibraryCall library_call(const NetworkCost& cost, const Schedule& s);

// The protocol the library's tuner picks for `s` on this network (none without a library).
Protocol tuned_protocol(const NetworkCost& cost, const Schedule& s);

}  // namespace dtsim

namespace dtsim {

// NCCL's channels (src/graph/search.cc, connect.cc): a ring across several nodes runs as one ring per NIC (the ring
// algorithm's --channels, each ring leaving a node through its own NIC), so that every NIC carries one ring each way.
// The channels dtsim gives a ring over positions placed node by node on a cluster (1: one ring; a tree, a call within
// one node, or ranks not placed node by node).
int library_channels(const NetworkCost& cost, const Schedule& s);

// One collective call as its library lays it on the network: the channels (library_channels; build(channels) makes
// the algorithm's Schedule with that many, each ring rotated inside the nodes) and the protocol (`forced`, or the
// tuner's choice when automatic, with the channels' NICs counted in the bandwidth). Without a library, or in protocol
// none: build(1) as it is.
struct LibraryCallPlan {
  Schedule schedule;
  int channels = 1;
};
LibraryCallPlan plan_library_call(const std::function<Schedule(int channels)>& build, const NetworkCost& network,
                                  bool automatic, Protocol forced, bool allow_channels = true);

}  // namespace dtsim
