// Golden-section search for the minimum of a function that is unimodal on [lo, hi] (deterministic either way): the
// bracket narrows by the golden ratio each step, reusing one of the two inner points, until `max_steps` steps or until
// it is no wider than `min_width`. Used by the device fits to published measurements and by the optimal checkpoint
// interval.
#pragma once

namespace dtsim {

struct GoldenBracket {
  double lo = 0;
  double hi = 0;
  double x1 = 0;  // the inner points, x1 < x2, and f at them
  double f1 = 0;
  double x2 = 0;
  double f2 = 0;
  double best() const { return f1 <= f2 ? x1 : x2; }  // the inner point with the lower value
};

template <typename F>
GoldenBracket golden_section(F&& f, double lo, double hi, int max_steps, double min_width = 0) {
  constexpr double golden = 0.6180339887498949;  // (sqrt(5) - 1) / 2
  GoldenBracket g{lo, hi, hi - golden * (hi - lo), 0, lo + golden * (hi - lo), 0};
  g.f1 = f(g.x1);
  g.f2 = f(g.x2);
  for (int i = 0; i < max_steps && g.hi - g.lo > min_width; ++i) {
    if (g.f1 <= g.f2) {
      g.hi = g.x2;
      g.x2 = g.x1;
      g.f2 = g.f1;
      g.x1 = g.hi - golden * (g.hi - g.lo);
      g.f1 = f(g.x1);
    } else {
      g.lo = g.x1;
      g.x1 = g.x2;
      g.f1 = g.f2;
      g.x2 = g.lo + golden * (g.hi - g.lo);
      g.f2 = f(g.x2);
    }
  }
  return g;
}

}  // namespace dtsim
