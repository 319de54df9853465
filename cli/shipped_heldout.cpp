#include "cli/shipped_heldout.hpp"

#include "cli/flags.hpp"
#include "scenarios/heldout_file.hpp"
#include "scenarios/json_reader.hpp"

namespace dtsim::cli {

std::optional<HeldoutErrors> shipped_heldout() {
  try {
    return load_shipped_heldout(DTSIM_DATA_DIR);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace dtsim::cli
