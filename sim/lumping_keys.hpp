// The hashing and renumbering that colour refinement runs on (sim/flow_lumping.cpp, sim/all_pairs_lumping.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace dtsim::lumping {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}
inline std::uint64_t combine(std::uint64_t seed, std::uint64_t value) { return mix(seed ^ mix(value)); }
inline std::uint64_t bits_of(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// Renumbers keys densely (equal keys, equal ids) and returns how many distinct there are.
template <typename Key>
std::uint32_t dense_ids(const std::vector<Key>& keys, std::vector<std::uint32_t>& ids,
                        std::vector<std::uint32_t>& order) {
  order.resize(keys.size());
  for (std::uint32_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  ids.resize(keys.size());
  std::uint32_t next = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i > 0 && keys[order[i]] != keys[order[i - 1]]) ++next;
    ids[order[i]] = next;
  }
  return keys.empty() ? 0 : next + 1;
}

}  // namespace dtsim::lumping
