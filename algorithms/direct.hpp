#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// Direct allreduce: reduce-scatter by direct sends to each chunk's owner, then a direct allgather.
Schedule direct_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Linear gather to options.root, scatter from it, and all-to-all: every block travels in one message, all at once.
Schedule direct_gather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule direct_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule direct_alltoall(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
