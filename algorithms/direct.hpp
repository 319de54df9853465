#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Direct allreduce: reduce-scatter by direct sends to each chunk's owner, then a direct allgather.
Schedule direct_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
