// The collective library's costs as the executors charge them (models/collective_library.hpp says what they are):
// resolved once per segment from the Schedule's protocol, the network's library and where the segment's positions
// run, and then read in the engines' hot paths as plain numbers.
#pragma once

#include <array>
#include <functional>
#include <vector>

#include "algorithms/direct.hpp"
#include "algorithms/registry.hpp"
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

// A collective library runs on a cluster (NetworkCost::library comes from the cluster file): the functions below that
// read where positions run need cost.topology, as every engine has it (place_on_star on the star, where no library is).

// The hardware a message between positions `src` and `dst` of a schedule crosses: the network between nodes (and
// between the star's hosts), NVLink or PCIe inside one, by the node's interconnect.
HopClass hop_class(const NetworkCost& cost, int src, int dst);

// The family of NCCL's tables an algorithm's Schedule belongs to (trees or rings).
LibraryAlgorithm library_algorithm(const Schedule& s);

// What a segment in s.protocol costs on this network (inactive when the protocol is none or there is no library).
SegmentLibraryCost segment_library_cost(const NetworkCost& cost, const Schedule& s);
// The same for a call of the family `family` in `protocol` over `nodes` nodes, split into `channels`.
SegmentLibraryCost segment_library_cost(const NetworkCost& cost, Protocol protocol, LibraryAlgorithm family, int nodes,
                                        std::uint32_t channels);

// The call as the library's tuner sees it: the Schedule's longest rank in steps and bytes sent, the slowest hardware
// its messages cross and that hardware's bandwidth, the nodes it spans.
LibraryCall library_call(const NetworkCost& cost, const Schedule& s);

// The call as the tuner sees an all-pairs algorithm (algorithms/direct.hpp) placed as `cost` says, without its
// messages: what library_call reads from its written-out Schedule (every position exchanges with every other, so the
// call spans all their nodes), in O(P).
LibraryCall library_call(const NetworkCost& cost, const AllPairs& pairs);

// The protocol the library picks for `s` on this network (none without a library): its tuner's, or for a call NCCL
// makes of sends and receives (all-to-all, gather, scatter) p2p_protocol for its largest message.
Protocol tuned_protocol(const NetworkCost& cost, const Schedule& s);
// tuned_protocol for an all-pairs algorithm without its messages (library_call's figures; its largest block).
Protocol tuned_protocol(const NetworkCost& cost, const AllPairs& pairs);
// Whether NCCL runs the collective as send/receive calls, whose protocol is p2p_protocol's rather than a tuner's.
bool runs_as_p2p(Collective collective);

// NCCL's channels (src/graph/search.cc, connect.cc): a ring across several nodes runs as one ring per NIC, each on
// its share of the bytes, so that every NIC carries one ring each way; a ring filling one node whose accelerators are
// linked pairwise (a mesh) runs as the mesh's rings over links of their own (g - 1 of them where a Hamiltonian
// decomposition is found). The channels dtsim gives `s` over positions placed node by node on a cluster, at most
// 64 (1: one ring, as before; a tree, a call within one NVSwitch or PCIe node, or ranks not placed node by node).
int library_channels(const NetworkCost& cost, const Schedule& s);
// Where copy c of the algorithm's positions runs: position i of node n goes to the accelerator (i + c G / channels)
// mod G of that node (G accelerators a node), so that copy c enters each node at NIC c's first accelerator and leaves
// it from NIC c-1's last one; inside one mesh node, position i goes to the i-th accelerator of the mesh's ring c; in
// several mesh nodes (G even), to the i-th accelerator of path c of G that share no link direction (Walecki's
// zigzag), which enters each node at accelerator c, so that the channels do not all cross the same links.
// Entry c P + i of the result, for P = accelerator_of.size().
std::vector<int> channel_placement(const Topology& topology, const std::vector<int>& accelerator_of, int channels);

// One collective call as its library lays it on the network: the protocol (`forced`, or the tuner's choice when
// automatic, the channels' NICs counted in its bandwidth) and the channels (library_channels, fewer for small calls:
// NCCL gives a channel at least its threads' worth of bytes), as one Schedule (the channels' copies side by side,
// replicate_groups, each its own ring running independently of the others) with where each of its positions runs.
// `build(bytes)` makes the algorithm's Schedule over the network's positions for a buffer of `bytes`; a channel's
// share is rounded up to whole elements. Without a library, or in protocol none: build(bytes) as it is.
struct LibraryCallPlan {
  Schedule schedule;
  std::vector<int> accelerator_of;
  int channels = 1;
};
LibraryCallPlan plan_library_call(const std::function<Schedule(std::uint64_t bytes)>& build, std::uint64_t bytes,
                                  std::uint64_t element_bytes, const NetworkCost& network, bool automatic,
                                  Protocol forced, bool allow_channels = true);

// plan_library_call for a registered algorithm on `ranks` positions with `options`: a tree in a protocol is pipelined
// in NCCL's chunks for that protocol (tree_chunk_bytes) unless the options name a --segment-size.
LibraryCallPlan plan_library_call(const AlgorithmInfo& algorithm, int ranks, const AlgorithmOptions& options,
                                  std::uint64_t bytes, const NetworkCost& network, bool automatic, Protocol forced,
                                  bool allow_channels = true);

}  // namespace dtsim
