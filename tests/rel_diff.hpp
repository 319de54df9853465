// The relative difference of a to b (b = 0 counts as the smallest positive double), as the tests compare times.
#pragma once

#include <algorithm>
#include <cmath>

inline double rel_diff(double a, double b) { return std::fabs(a - b) / std::max(std::fabs(b), 1e-300); }
