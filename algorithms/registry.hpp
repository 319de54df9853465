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

std::span<const AlgorithmInfo> algorithms();
// Throws std::invalid_argument naming the accepted algorithms when `name` is unknown.
const AlgorithmInfo& find_algorithm(std::string_view name);
std::string algorithm_names();  // "ring, ..." for messages

}  // namespace dtsim
