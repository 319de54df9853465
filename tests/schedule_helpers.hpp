// Helpers for tests that take a schedule apart and plant bugs in it: they work on the full form (compact schedules
// expanded).
#pragma once

#include <vector>

#include "algorithms/schedule.hpp"

namespace dtsim::test {

inline std::vector<std::vector<Op>> ops_by_rank(const Schedule& compact_or_full) {
  const Schedule s = expand(compact_or_full);
  std::vector<std::vector<Op>> out;
  for (int r = 0; r < s.ranks; ++r) {
    const auto ops = s.rank_ops(r);
    out.emplace_back(ops.begin(), ops.end());
  }
  return out;
}

inline Schedule with_ops(Schedule s, const std::vector<std::vector<Op>>& by_rank) {
  s.repeats.clear();  // the ops given are the full form
  s.ops.clear();
  s.rank_begin.clear();
  for (const auto& ops : by_rank) {
    s.rank_begin.push_back(s.ops.size());
    s.ops.insert(s.ops.end(), ops.begin(), ops.end());
  }
  s.rank_begin.push_back(s.ops.size());
  return s;
}

inline Op step_start(Op op) {
  op.mark_step_start();
  return op;
}

}  // namespace dtsim::test
