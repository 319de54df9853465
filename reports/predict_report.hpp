// Results of `dtsim predict`: a table for people, and JSON with a `results` list (keys documented in docs/predict.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/heldout_errors.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/parallel.hpp"
#include "sim/predict.hpp"

namespace dtsim {

// `heldout`: dtsim's errors on held-out published runs (validation/published/heldout.json), quoted as how far to trust
// the throughputs; nullptr says they are missing.
std::string predict_text(const Scenario& scenario, const std::vector<Prediction>& results,
                         const HeldoutErrors* heldout = nullptr);
nlohmann::json predict_json(const Scenario& scenario, const std::vector<Prediction>& results,
                            const HeldoutErrors* heldout = nullptr);

// How a prediction's gradient buckets were reduced, one cell: "25 buckets of 26.21 MB by chain-dbtree (ll128, 8
// channels); 1 bucket of 4.194 MB by ring (simple, 8 channels)"; empty on one accelerator.
std::string reductions_cell(const std::vector<BucketReduction>& reductions);

// Model-parallel predictions (a scenario with "parallel"): per layout the step, its breakdown (compute, tensor
// allreduces, pipeline bubble, exposed data-parallel communication), memory and bytes sent per accelerator.
// `search`: the rows are --search's ranking (by time per sample at each accelerator count), and the header says so.
std::string parallel_text(const Scenario& scenario, const std::vector<ParallelPrediction>& results, bool search = false,
                          const HeldoutErrors* heldout = nullptr);
nlohmann::json parallel_json(const Scenario& scenario, const std::vector<ParallelPrediction>& results,
                             const HeldoutErrors* heldout = nullptr);

}  // namespace dtsim
