#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

Schedule binomial_tree_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Binomial reduce to options.root and binomial broadcast from it.
Schedule binomial_reduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule binomial_broadcast(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
