// The algorithms users can name, each a pure function (ranks, bytes, options) -> Schedule.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "algorithms/options.hpp"
#include "algorithms/schedule.hpp"

namespace dtsim {

struct AlgorithmInfo {
  std::string_view name;
  Collective collective;
  std::string_view summary;
  Schedule (*build)(int ranks, std::uint64_t bytes, const AlgorithmOptions& options);
};

// Every registered algorithm, of every collective.
std::span<const AlgorithmInfo> algorithms();
// Throws std::invalid_argument naming the accepted algorithms when `name` is unknown for the collective.
const AlgorithmInfo& find_algorithm(std::string_view name, Collective collective = Collective::allreduce);
std::string algorithm_names(Collective collective = Collective::allreduce);  // "ring, ..." for messages
// Throws std::invalid_argument naming the accepted collectives.
Collective parse_collective(std::string_view name);
// An algorithm named as "ALGORITHM" (an allreduce) or "COLLECTIVE/ALGORITHM" (e.g. "all-to-all/direct"), as the
// validation cases name them; throws as find_algorithm and parse_collective do.
const AlgorithmInfo& find_qualified_algorithm(std::string_view name);

}  // namespace dtsim
