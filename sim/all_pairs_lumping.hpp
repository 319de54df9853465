// Classes of ranks for an all-pairs algorithm (algorithms/direct.hpp: direct allreduce, direct all-to-all) found
// without its P x P messages, so that an all-to-all of 16,384 GPUs (268 million messages) runs in classes.
//
// sim/flow_lumping.hpp finds its classes from every message; here the messages are known to be all pairs, so the
// classes come from the cluster alone. Colour refinement over the topology (its vertices, with how many positions run
// on each, and each direction of its links, by capacity, latency, gap and kind) gives classes of vertices and of
// link directions; a rank's class is its accelerator's. A representative of each class is routed to every other
// rank (P - 1 routes a class), and its messages are grouped by the receiver's class and the multiset of link classes
// on the route (with the route's latency, narrowest link and gap): a message class, with members = its count from the
// representative x the ranks of the class. A link class then carries members x (links of that class on the route) /
// (links in the class) flows of a message class, as in flow_lumping.hpp.
//
// Where the cluster is symmetric enough that the links of one class carry equal loads (a star, a fat-tree whose
// leaves and pods are all full, with D-mod-k routing), this is the exact max-min solution, as in flow_lumping.hpp
// (tests/test_all_pairs.cpp compares with the full flow engine). Where they do not (a fat-tree with a partly filled
// leaf or pod) each link is given its class's mean load: the per-message costs, the NIC and NVLink terms stay exact,
// the fabric's shares are averaged. Every message is timed at the largest chunk (chunks differ by an element), as
// FlowOptions::pad_chunks_bytes times them in the full engine.
#pragma once

#include <optional>

#include "algorithms/direct.hpp"
#include "sim/all_pairs_fit.hpp"
#include "sim/flow_executor.hpp"
#include "sim/flow_lumping.hpp"
#include "sim/library_cost.hpp"

namespace dtsim::lumping {

// How exact all_pairs_classes is on a placed network (options.topology and accelerator_of set).
AllPairsFit all_pairs_fit(const FlowOptions& options);

// The classes for `pairs` on the placed network of `options` (options.topology and accelerator_of set: a Placed
// FlowOptions), where they are at least as exact as `allowed` (AllPairsFit runs from the most exact; unsupported: on
// any network), or nothing; `fit`, when given, is set to how exact they are. `library`: the collective library's costs
// of the call (inactive: plain messages). Throws std::invalid_argument when its chunks cannot be timed alike (padding
// off, or chunks further apart than the padding allows) or a pair of positions has no route.
std::optional<Lumping> all_pairs_classes(const AllPairs& pairs, const FlowOptions& options,
                                         const SegmentLibraryCost& library = {},
                                         AllPairsFit allowed = AllPairsFit::unsupported, AllPairsFit* fit = nullptr);

}  // namespace dtsim::lumping
