#pragma once

#include <cstdint>

namespace dtsim {

// Options every schedule builder accepts. Algorithm-specific options join here as algorithms arrive.
struct AlgorithmOptions {
  // Chunk boundaries fall on multiples of this many bytes (4 for float32 payloads); bytes must be a multiple of it.
  std::uint32_t element_bytes = 1;
};

}  // namespace dtsim
