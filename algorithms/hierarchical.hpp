#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Two-level allreduce: reduce-scatter inside each node, an allreduce of options.inter_algorithm across nodes, then
// an allgather inside each node. Ranks r = node * ranks_per_node + local.
Schedule hierarchical_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
