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

void attach_trust(CollectiveRun& run, const HeldoutErrors* heldout) {
  if (run.protocol == Protocol::none || heldout == nullptr || heldout->collectives.rows == 0) return;
  const bool all_to_all = run.collective == "all-to-all";
  const std::uint64_t per_rank =
      all_to_all && run.ranks > 0 ? run.bytes / static_cast<std::uint64_t>(run.ranks) : run.bytes;
  const std::string size = collective_size_class(per_rank);
  run.trust = heldout->collectives;
  std::string scope;
  for (const auto& [name, band] : heldout->collectives_by_size) {
    if (name != size) continue;
    if (band.rows >= heldout_min_device_rows) {
      run.trust = band;
      scope = size == ">= 1 MiB" ? "1 MiB or more a rank" : size + " a rank";
    } else {
      scope = "every size, only " + std::to_string(band.rows) + " of them " + size + " a rank";
    }
  }
  if (scope.empty()) scope = "every size, none of them " + size + " a rank";
  run.trust_basis = "held-out nccl-tests and rccl-tests runs (" + scope + "; " +
                    std::to_string(run.trust->min_devices) + " to " + std::to_string(run.trust->max_devices) + " GPUs)";
}

}  // namespace dtsim::cli
