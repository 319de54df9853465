// The CLI's edge for algorithms: the --algorithm documentation and the algorithm option flags, made from the
// registry and the options each algorithm declares (algorithms/options.hpp), parsed and checked from those specs.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "cli/flags.hpp"

namespace dtsim::cli {

// "allreduce: ring, tree, ...; reduce-scatter and allgather: ring; ...": every registered algorithm by collective.
std::string algorithm_flag_doc();

// One flag per option the registered algorithms declare (those users set), in registration order: --NAME, its value
// form and default, and "ALGORITHMS: doc" (an allreduce-valued option also lists the allreduces it accepts).
// Computed anew on each call (a test registers algorithms of its own); the texts live as long as the program.
std::vector<FlagSpec> algorithm_option_flags();

// Reads every algorithm option flag (each value checked against its spec, whether or not the algorithm uses it).
AlgorithmOptions parse_algorithm_options(const Flags& flags);

// Refuses, naming the algorithms that have it, each option flag that none of the chosen algorithms reads, neither
// itself nor as the inner allreduce an allreduce-valued option (hierarchical's --inter) names.
void check_option_flags(const Flags& flags, std::span<const AlgorithmInfo* const> chosen);

}  // namespace dtsim::cli
