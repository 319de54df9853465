// A training step as a picture (`dtsim draw --scenario`): per drawn rank (one of each class of ranks that run alike,
// and the slowest) a compute row (input stall, forward, backward with its layers ticked, optimizer) and a reduction
// row (each gradient bucket's allreduce), over every simulated step, the communication the last step waits for
// (exposed) marked, from the simulated trace. Every bar carries data attributes (rank, kind, start, end, bytes) so
// that tests read it back.
#pragma once

#include <string>
#include <vector>

#include "sim/executor.hpp"

namespace dtsim {

struct StepDrawing {
  std::string title;
  std::vector<int> ranks;                // the ranks drawn, in order
  std::vector<std::string> rank_notes;   // per drawn rank, e.g. "rank 0 (all 16 ranks alike)"
  std::vector<double> backward_layer_s;  // per layer in backward order (last layer first): ticks inside backward bars
  double exposed_s = 0;                  // the last step's exposed communication, as the prediction measured it
};

std::string step_svg(const RunTrace& trace, const StepDrawing& drawing);

}  // namespace dtsim
