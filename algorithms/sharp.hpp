#pragma once

#include <array>

#include "algorithms/hierarchical.hpp"
#include "algorithms/options.hpp"
#include "algorithms/pipelined_tree.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// The aggregation tree's shape: participants under one leaf switch, and children of every switch above.
inline constexpr OptionSpec leaf_ranks_option{.name = "leaf-ranks",
                                              .kind = OptionKind::count,
                                              .value_form = "N",
                                              .default_text = "32",
                                              .default_number = 32,
                                              .min = 1,
                                              .max = 1U << 28,
                                              .doc =
                                                  "nodes (of --ranks-per-node ranks) under one leaf switch of the "
                                                  "aggregation tree (on a cluster: from its fabric and the placement)",
                                              .used_for = "aggregate ranks in leaf switches"};
inline constexpr OptionSpec fanin_option{.name = "fanin",
                                         .kind = OptionKind::count,
                                         .value_form = "N",
                                         .default_text = "32",
                                         .default_number = 32,
                                         .min = 2,
                                         .max = 1U << 28,
                                         .doc =
                                             "switches below each switch above the leaves of the aggregation tree "
                                             "(on a cluster: from its fabric)",
                                         .used_for = "aggregate switches"};
inline constexpr OptionSpec in_node_option{
    .name = "in-node",
    .kind = OptionKind::choice,
    .value_form = "HOW",
    .default_text = "scatter",
    .choices = {"scatter", "nvls"},
    .doc =
        "inside each node: a scatter and a gather over NVLink (CollNet Direct), or the node's NVSwitch reducing and "
        "multicasting (nvls: NCCL's NVLS with CollNet; on a cluster, the default where node.intra.nvls is true)",
    .used_for = "reduce inside nodes before the fabric"};
inline constexpr std::array<OptionSpec, 5> sharp_options{segment_size_option, ranks_per_node_option, leaf_ranks_option,
                                                         fanin_option, in_node_option};

// SHARP allreduce as NCCL's CollNet runs it, the fabric's switches reducing in the network (phases, cost and source in
// sharp.cpp): the P ranks in nodes of --ranks-per-node and the helpers of one aggregation tree a local rank
// (Schedule::switch_helpers), pipelined in segments of --segment-size.
Schedule sharp_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Its cost without contention, each message alone at the full bandwidth: K segments, D levels of switches, G ranks a
// node: (K + 2D - 1)(alpha + n/(K G) beta), plus 2 (alpha + (G-1) n/(K G) beta) a segment step where G > 1.
double sharp_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, const AlgorithmOptions& options);

}  // namespace dtsim
