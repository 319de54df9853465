#pragma once

#include <array>

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"

namespace dtsim {

// The parameter server's options.
inline constexpr OptionSpec ps_servers_option{.name = "servers",
                                              .kind = OptionKind::count,
                                              .value_form = "S",
                                              .default_text = "1",
                                              .default_number = 1,
                                              .min = 1,
                                              .max = 1000000,
                                              .doc = "number of server shards, 1 to 1000000",
                                              .used_for = "has parameter servers"};
inline constexpr OptionSpec ps_placement_option{
    .name = "ps-placement",
    .kind = OptionKind::choice,
    .value_form = "WHERE",
    .default_text = "hosts",
    .choices = {"hosts", "colocated"},
    .doc =
        "servers on hosts of their own (hosts) or on the first S ranks (colocated); with --cluster only "
        "colocated, which is then the default (the cluster has no spare hosts)",
    .used_for = "has parameter servers"};
// Co-located shard s lives on worker s x stride (>= 1, (servers - 1) x stride < ranks): the ranks per node puts one
// shard on the first accelerator of each node. Set by predict, not by users.
inline constexpr OptionSpec ps_server_stride_option{.name = "server-stride",
                                                    .kind = OptionKind::count,
                                                    .default_text = "1",
                                                    .default_number = 1,
                                                    .min = 1,
                                                    .max = 1000000,
                                                    .doc = "co-located shard s lives on worker s x stride",
                                                    .used_for = "has parameter servers",
                                                    .flag = false};
inline constexpr std::array<OptionSpec, 3> parameter_server_options{ps_servers_option, ps_placement_option,
                                                                    ps_server_stride_option};

// Synchronous parameter server (push, reduce, pull) with --servers shards.
Schedule parameter_server_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});
// Its closed form without contention (models/alpha_beta.hpp's parameter_server_seconds with the options' servers).
double parameter_server_closed_form(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                    const AlgorithmOptions& options);

}  // namespace dtsim
