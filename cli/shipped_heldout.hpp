// The held-out errors predict, explain and collective quote as how far to trust a prediction: the shipped file
// (DTSIM_DATA_DIR/validation/published/heldout.json, models/heldout_errors.hpp).
#pragma once

#include <optional>

#include "models/heldout_errors.hpp"

namespace dtsim::cli {

// Nothing when the file is absent (the commands then say the errors are not available); a UsageError naming the file
// and the JSON path when it is bad.
std::optional<HeldoutErrors> shipped_heldout();

}  // namespace dtsim::cli
