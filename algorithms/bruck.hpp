#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Bruck's allgather and its transpose, a reduce-scatter: ceil(log2 P) steps for any P (phases, cost and sources in
// bruck.cpp). Block r of P is rank r's, as for the ring.
Schedule bruck_allgather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule bruck_reduce_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
