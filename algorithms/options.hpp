// Options every schedule builder accepts, each with its meaning, default and valid range.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace dtsim {

struct AlgorithmOptions {
  // Chunk boundaries fall on multiples of this many bytes (4 for float32 payloads); bytes must be a multiple of it.
  std::uint32_t element_bytes = 1;
  // Parameter server: number of server shards, >= 1 (each owns bytes/servers of the buffer).
  std::uint32_t servers = 1;
  // Parameter server: servers on hosts of their own (false) or on the first `servers` workers (true, servers <= ranks).
  bool colocated_servers = false;
  // Parameter server, co-located: shard s lives on worker s x server_stride (>= 1, (servers - 1) x server_stride <
  // ranks). The ranks per node puts one shard on the first accelerator of each node.
  std::uint32_t server_stride = 1;
  // Broadcast and reduce: the root rank, in [0, ranks).
  std::uint32_t root = 0;
  // Hierarchical: ranks per node (>= 1, dividing ranks) and the allreduce algorithm run across nodes (any registered
  // allreduce but hierarchical itself and ps).
  std::uint32_t ranks_per_node = 1;
  std::string inter_algorithm = "ring";
  // Pipelined tree and double binary tree: the largest segment moved per step, >= 1 byte (rounded to whole elements).
  std::uint64_t segment_bytes = 1ULL << 20;
};

// An option value the algorithm cannot use; `option` names it as users write it (e.g. "servers").
struct OptionError : std::invalid_argument {
  OptionError(std::string option_name, const std::string& message)
      : std::invalid_argument(message), option(std::move(option_name)) {}
  std::string option;
};

}  // namespace dtsim
