#pragma once

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"

namespace dtsim {

// The ring allreduce's options: several rings at once (NCCL's channels), each on its share of the buffer, ring c
// visiting the ranks of each group of G in an order rotated by c G / K places, so that on nodes of G ranks each ring
// leaves a node from a different rank (one ring per NIC).
inline constexpr OptionSpec channels_option{.name = "channels",
                                            .kind = OptionKind::count,
                                            .value_form = "K",
                                            .default_text = "1",
                                            .default_number = 1,
                                            .min = 1,
                                            .max = 64,
                                            .doc = "rings at once, each on 1/K of the buffer (NCCL's channels)",
                                            .used_for = "runs several rings"};
inline constexpr OptionSpec channel_group_option{
    .name = "channel-group",
    .kind = OptionKind::count,
    .value_form = "G",
    .default_text = "1",
    .default_number = 1,
    .min = 1,
    .max = 1000000,
    .doc =
        "ranks per node, dividing the rank count (with --cluster: the node's accelerators by default): ring c's "
        "order inside each group of G is rotated by c G / K",
    .used_for = "rotates its rings inside nodes"};
inline constexpr std::array<OptionSpec, 2> ring_options{channels_option, channel_group_option};

// Phases, cost and source: ring.cpp. With K channels, without contention (each of a step's K messages of n/(KP) at
// the full bandwidth, as the registry's closed forms are): 2(P-1) max(alpha + n/(KP) beta, (K-1) g) + (P-1)/P n gamma;
// on one shared link per host the K messages take n/P beta together.
Schedule ring_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
double ring_allreduce_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                  const AlgorithmOptions& options);
// The two halves of the ring allreduce as collectives of their own; block r of P is rank r's.
Schedule ring_reduce_scatter(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
Schedule ring_allgather(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

}  // namespace dtsim
