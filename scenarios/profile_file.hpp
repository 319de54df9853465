// Profiles: one training step measured on one device, as compute input for `predict` (a scenario's "profile", or
// --profile) and `dtsim import-profile`. Two forms, told apart by the file's extension (docs/profiles.md):
//   - .json: a Chrome trace-event file that torch.profiler wrote (export_chrome_trace) of steps marked by
//     validation/pytorch/dtsim_profile.py. Read from it, per step (a "ProfilerStep#K" scope):
//       "dtsim.forward:NAME#params=N"  a layer's forward scope (exclusive: layers must not nest), N its parameters;
//       "dtsim.backward:NAME"          the instant the layer's output gradient was ready: its backward runs from there
//                                      to the next such instant, the last to the end of the step's last
//                                      "autograd::engine::evaluate_function: ..." event;
//       "Optimizer.step#..."           the optimizer;
//       "dtsim.batch=B"                the samples in the step (once a step);
//     everything else in the step is its overhead. Each time is the median over the trace's steps.
//   - .csv: lines "# batch=B" (required), "# optimizer_ms=X", "# overhead_ms=Y", then the header
//     layer,params,forward_ms,backward_ms and a row per layer in forward order.
// Every problem is a ScenarioError naming the file (and the line, step or event) and what is accepted.
#pragma once

#include <istream>
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>

#include "models/measured_profile.hpp"

namespace dtsim {

MeasuredProfile load_profile_file(const std::string& path);
// The two forms from what is already read (`path` names it in errors).
MeasuredProfile read_profile_trace(const nlohmann::json& document, const std::string& path);
MeasuredProfile read_profile_csv(std::istream& in, const std::string& path);
// The profile in the CSV form load_profile_file reads (times to a microsecond).
void write_profile_csv(const MeasuredProfile& profile, std::ostream& out);

}  // namespace dtsim
