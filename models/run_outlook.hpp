// A whole training run on a configuration: how often it is interrupted, what its checkpoints cost, how long it takes
// and how much of that is useful (goodput). It applies the failure and checkpoint model (models/goodput.hpp) to a
// configuration's components and training state; a scenario's "failures" and "checkpoint" set its inputs.
#pragma once

#include <cstdint>
#include <vector>

#include "models/goodput.hpp"

namespace dtsim {

// A run's failure and checkpoint settings. Defaults and their sources: docs/goodput.md.
struct FailureSettings {
  FailureRates rates;  // per component (models/goodput.hpp: fitted to Llama 3's interruptions)
  // Each node writes its share of a checkpoint at this rate (NVIDIA DGX SuperPOD H100 reference architecture,
  // storage guidance "good": 2 GB/s single-node write)
  double write_Bps_per_node = 2e9;
  // and the storage system takes at most this much from all of them (Llama 3's Tectonic fabric: 2 TB/s sustainable)
  double storage_Bps = 2e12;
  // From a failure to training again: detection, rescheduling, loading the checkpoint (Kokolis et al. 2024, u0 of
  // 5 to 20 min on Meta's RSC clusters; MegaScale 2024: detection and diagnosis under 10 min)
  double restart_s = 600;
  // What every checkpoint costs besides writing its bytes: the pause to snapshot and hand the state to the writer
  // (ByteCheckpoint, Wan et al. 2024, table 8: 0.34 s blocking on 1,488 GPUs and 0.59 s on 8,960)
  double overhead_s = 0.5;
  double interval_s = 0;  // work between checkpoints (0: the interval that minimises the expected wall time)
};

// What the run is: useful work in seconds (steps x their time), or a wall-clock budget to fill.
struct RunLength {
  double work_s = 0;  // > 0: this much useful work
  double wall_s = 0;  // > 0: instead, a budget of wall time (the useful work is what fits)
};

struct RunOutlook {
  ComponentCounts counts;
  double failures_per_h = 0;
  double mtbf_s = 0;
  double checkpoint_bytes = 0;
  double write_s = 0;
  double interval_s = 0;               // used: given, or the optimum
  double young_interval_s = 0;         // Young 1974, for comparison (0: no failures)
  double daly_interval_s = 0;          // Daly 2006
  RunEstimate run;                     // expected wall time, goodput, interruptions at interval_s
  std::vector<double> sampled_wall_s;  // Monte Carlo of the run (empty unless asked)
};

// The run of `length` on a configuration of these components and this much state to checkpoint, written by `nodes`
// nodes. `samples` > 0: also that many Monte Carlo runs (seed). Throws std::invalid_argument for a length that is
// neither work nor wall time, and what expected_run and sample_runs refuse.
RunOutlook run_outlook(const FailureSettings& settings, const ComponentCounts& counts, double checkpoint_bytes,
                       int nodes, const RunLength& length, int samples = 0, std::uint64_t seed = 1);

}  // namespace dtsim
