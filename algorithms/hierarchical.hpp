#pragma once

#include <array>

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"
#include "models/alpha_beta.hpp"

namespace dtsim {

// The hierarchical allreduce's options; the inner allreduce reads its own from the same options.
inline constexpr OptionSpec ranks_per_node_option{.name = "ranks-per-node",
                                                  .kind = OptionKind::count,
                                                  .value_form = "G",
                                                  .default_text = "1",
                                                  .default_number = 1,
                                                  .min = 1,
                                                  .max = 1000000,
                                                  .doc = "ranks per node, dividing the rank count",
                                                  .used_for = "group ranks into nodes"};
inline constexpr OptionSpec inter_option{.name = "inter",
                                         .kind = OptionKind::allreduce,
                                         .value_form = "NAME",
                                         .default_text = "ring",
                                         .doc = "the allreduce across nodes",
                                         .used_for = "runs an allreduce across nodes"};
inline constexpr std::array<OptionSpec, 2> hierarchical_options{ranks_per_node_option, inter_option};

// The ranks a node of `ranks` holds (--ranks-per-node); throws OptionError naming it unless it divides `ranks`.
std::uint32_t ranks_per_node(const AlgorithmOptions& options, std::uint32_t ranks);

// Two-level allreduce: reduce-scatter inside each node, an allreduce of --inter across nodes, then an allgather
// inside each node. Ranks r = node * ranks_per_node + local.
Schedule hierarchical_allreduce(int ranks, std::uint64_t bytes, const AlgorithmOptions& options = {});

// Its closed form with G ranks per node: (G-1)(alpha + n/G beta + n/G gamma) + [inter allreduce of n/G on P/G ranks]
// + (G-1)(alpha + n/G beta); negative when the inter algorithm has no closed form (or cannot nest). The inter
// algorithm's closed form reads its own options from `options`.
double hierarchical_allreduce_seconds(int ranks, std::uint64_t bytes, const AlphaBetaGamma& cost,
                                      const AlgorithmOptions& options);

}  // namespace dtsim
