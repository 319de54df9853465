#include "reports/distribution_json.hpp"

namespace dtsim {

nlohmann::json step_distribution_json(const StepDistribution& d) {
  nlohmann::json bins = nlohmann::json::array();
  for (const HistogramBin& b : d.histogram)
    bins.push_back({{"from_s", b.from_s}, {"to_s", b.to_s}, {"count", b.count}});
  return {{"samples", d.samples}, {"seed", d.seed},   {"sampler", d.sampler == Sampler::fast ? "fast" : "exact"},
          {"mean_s", d.mean_s},   {"p50_s", d.p50_s}, {"p90_s", d.p90_s},
          {"p99_s", d.p99_s},     {"min_s", d.min_s}, {"max_s", d.max_s},
          {"histogram", bins}};
}

}  // namespace dtsim
