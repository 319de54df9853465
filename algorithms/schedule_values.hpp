// A Schedule run on real values, outside any network: every rank's buffer of floats moved and reduced as the
// schedule's semantics say (schedule.hpp: a step's sends read the values as they are when the step begins; its
// receives land when it ends, reduces adding and copies overwriting, in the order they were matched, which the walk
// fixes). Matching is
// FIFO per channel and so independent of timing: what a collective computes does not depend on when its messages
// move, so a simulation times a Schedule on the network and this gives its values (dtsim train's real gradients).
#pragma once

#include <span>
#include <vector>

#include "algorithms/schedule.hpp"

namespace dtsim {

// Runs `schedule` (compact or not) on buffers[r], one per rank, each of schedule.bytes / 4 floats. Throws
// std::invalid_argument for a buffer of another size or a schedule that deadlocks.
void run_on_values(const Schedule& schedule, std::span<std::vector<float>* const> buffers);

}  // namespace dtsim
