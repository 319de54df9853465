#include "models/run_outlook.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dtsim {

RunOutlook run_outlook(const FailureSettings& settings, const ComponentCounts& counts, double checkpoint_bytes,
                       int nodes, const RunLength& length, int samples, std::uint64_t seed) {
  if (nodes < 1) throw std::invalid_argument("run: needs at least one node");
  if ((length.work_s > 0) == (length.wall_s > 0)) {
    throw std::invalid_argument("run: give either the useful work or the wall time, and > 0");
  }
  RunOutlook o;
  o.counts = counts;
  o.failures_per_h = failures_per_hour(settings.rates, counts);
  o.mtbf_s = mtbf_s(settings.rates, counts);
  o.checkpoint_bytes = checkpoint_bytes;
  o.write_s = settings.overhead_s +
              checkpoint_write_s(checkpoint_bytes, std::min(settings.write_Bps_per_node * nodes, settings.storage_Bps));
  const CheckpointCost cost{o.write_s, settings.restart_s};
  const bool fails = std::isfinite(o.mtbf_s);
  if (fails && o.write_s > 0) {
    o.young_interval_s = young_interval_s(o.write_s, o.mtbf_s);
    o.daly_interval_s = daly_interval_s(o.write_s, o.mtbf_s);
  }
  if (settings.interval_s > 0) {
    o.interval_s = settings.interval_s;
  } else if (fails && o.write_s > 0) {
    o.interval_s = optimal_interval_s(o.mtbf_s, cost);
  } else {  // nothing fails, or checkpoints are free: one checkpoint at the end is as good as any
    o.interval_s = std::numeric_limits<double>::infinity();
  }
  double work_s = length.work_s;
  if (length.wall_s > 0) {  // the wall time is proportional to the work: scale one second of work up to the budget
    const double interval = std::isfinite(o.interval_s) ? o.interval_s : length.wall_s;
    const RunEstimate unit = expected_run(interval, o.mtbf_s, interval, cost);
    work_s = length.wall_s * interval / unit.wall_s;
    // failures come so often that no interval of work ever completes: nothing is trained (less than a billionth of
    // the budget: an MTBF of 1 s against a 0.6 s checkpoint and its restarts left 1e-125 s of work, whose own run
    // then came out at 1e46 days)
    if (!(work_s > 1e-9 * length.wall_s)) {
      o.run.wall_s = length.wall_s;
      o.run.goodput = 0;
      o.run.expected_interruptions = length.wall_s / o.mtbf_s;
      if (samples > 0) o.sampled_wall_s.assign(static_cast<std::size_t>(samples), length.wall_s);
      return o;
    }
  }
  const double interval = std::isfinite(o.interval_s) ? std::min(o.interval_s, work_s) : work_s;
  o.run = expected_run(work_s, o.mtbf_s, interval, cost);
  // A run expecting more failures than sample_runs will draw (1e7 a sample) never ends in any practical sense (an
  // MTBF of 1 s against a 0.6 s checkpoint: about 1e264 failures): reported as never ending, as one whose failures
  // outpace every interval is, not sampled.
  if (o.run.expected_interruptions > 1e7) {
    o.run.wall_s = std::numeric_limits<double>::infinity();
    o.run.goodput = 0;
    o.run.expected_interruptions = std::numeric_limits<double>::infinity();
  }
  // (a run that never ends, failures outpacing every checkpoint interval, has nothing to sample)
  if (samples > 0 && std::isfinite(o.run.wall_s))
    o.sampled_wall_s = sample_runs(work_s, o.mtbf_s, interval, cost, seed, samples);
  return o;
}

}  // namespace dtsim
