// The held-out errors predict, explain and collective quote as how far to trust a prediction: the shipped file
// (DTSIM_DATA_DIR/validation/published/heldout.json, models/heldout_errors.hpp).
#pragma once

#include <optional>

#include "models/heldout_errors.hpp"
#include "reports/collective_report.hpp"

namespace dtsim::cli {

// Nothing when the file is absent (the commands then say the errors are not available); a UsageError naming the file
// and the JSON path when it is bad.
std::optional<HeldoutErrors> shipped_heldout();

// A collective library's call (a run in a protocol): the held-out published nccl-tests and rccl-tests runs of its size
// class as how far to trust its bus bandwidth (CollectiveRun::trust), or of every size, saying how few were of its own;
// nothing for plain messages or without `heldout`.
void attach_trust(CollectiveRun& run, const HeldoutErrors* heldout);

}  // namespace dtsim::cli
