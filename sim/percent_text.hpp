// A share as a whole percentage for the explanations the simulator writes ("37%"); 0% of nothing.
#pragma once

#include <cstdio>
#include <string>

namespace dtsim {

inline std::string percent(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return text;
}

}  // namespace dtsim
