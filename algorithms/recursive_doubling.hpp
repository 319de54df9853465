#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Recursive doubling ("butterfly"), with non-powers of two folded as MPICH does.
Schedule recursive_doubling_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
