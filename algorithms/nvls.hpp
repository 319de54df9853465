#pragma once

#include "algorithms/options.hpp"
#include "algorithms/pipelined_tree.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

// NCCL's NVLS allreduce inside one NVSwitch node (phases, cost and source in nvls.cpp): the P ranks and one helper,
// the switch's reduction engine (rank P, Schedule::switch_helpers), pipelined in segments of --segment-size.
Schedule nvls_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Its cost without contention, each message alone at the full bandwidth: (K + 3)(alpha + n/(K P) beta), K segments.
double nvls_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost, const AlgorithmOptions& options);

}  // namespace dtsim
