#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

Schedule binomial_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
