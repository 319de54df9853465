#include "models/ddp_buckets.hpp"

namespace dtsim {

std::vector<std::size_t> ddp_bucket_counts(std::span<const std::uint64_t> bytes, std::uint64_t first_limit_bytes,
                                           std::uint64_t limit_bytes) {
  std::vector<std::size_t> counts;
  std::uint64_t held = 0;
  std::size_t members = 0;
  for (const std::uint64_t b : bytes) {
    held += b;
    ++members;
    if (held >= (counts.empty() ? first_limit_bytes : limit_bytes)) {
      counts.push_back(members);
      held = 0;
      members = 0;
    }
  }
  if (members > 0) counts.push_back(members);
  return counts;
}

}  // namespace dtsim
