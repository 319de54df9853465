// What the simulation engines (the flow engine, its lumped form, the step driver) agree on: an instant that never
// comes, an index that names nothing, and when two instants are one. (A file takes them with using-declarations after
// its includes: `none` is also an enumerator of several enums.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

namespace dtsim::engine {

inline constexpr double infinity = std::numeric_limits<double>::infinity();
inline constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();

// Two times this close are one instant (SimGrid's own timing precision is coarser).
inline double tolerance(double now) { return 1e-12 * std::max(1.0, now); }

}  // namespace dtsim::engine
