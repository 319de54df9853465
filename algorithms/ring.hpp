#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

Schedule ring_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// The two halves of the ring allreduce as collectives of their own; block r of P is rank r's.
Schedule ring_reduce_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule ring_allgather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
