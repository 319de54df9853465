#pragma once

#include <array>

#include "algorithms/hierarchical.hpp"
#include "algorithms/options.hpp"
#include "algorithms/pipelined_tree.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

inline constexpr std::array<OptionSpec, 2> nvls_tree_options{segment_size_option, ranks_per_node_option};

// NCCL's NVLS tree allreduce across nodes whose NVSwitches reduce (phases, cost and source in nvls_tree.cpp): the P
// ranks in nodes of --ranks-per-node and one helper a node, its switch (Schedule::switch_helpers), pipelined in
// segments of --segment-size.
Schedule nvls_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Its cost without contention, each message alone at the full bandwidth: K segments of G shares, two trees of height
// H over the N nodes: (K + 4 + 2H)(alpha + n/K beta), the switches reducing in flight.
double nvls_tree_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                             const AlgorithmOptions& options);

}  // namespace dtsim
