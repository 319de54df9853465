// A sampled time (sim/step_sampler.hpp's StepDistribution) as JSON, the one form predict, collective and compare
// print: samples, seed, sampler, mean, p50, p90, p99, min, max (seconds) and the histogram's bins.
#pragma once

#include <nlohmann/json.hpp>

#include "sim/step_sampler.hpp"

namespace dtsim {

nlohmann::json step_distribution_json(const StepDistribution& d);

}  // namespace dtsim
