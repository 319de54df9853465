#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling allgather (non-powers of two folded in).
Schedule rabenseifner_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
