#include "cli/library_flag.hpp"

#include <filesystem>

#include "models/collective_library.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/scenario_file.hpp"

namespace dtsim::cli {

ClusterSpec cluster_by_name_or_file(const std::string& value) {
  std::error_code ec;
  const bool exists = std::filesystem::exists(value, ec);
  if (exists || value.ends_with(".json") || value.find('/') != std::string::npos) {
    return load_cluster_file(value);  // refuses a directory or a missing file, naming it
  }
  return load_named_cluster(value, ".", DTSIM_DATA_DIR);
}

ClusterSpec cluster_from_flag(const std::string& value) {
  try {
    return cluster_by_name_or_file(value);
  } catch (const ScenarioError& e) {
    throw UsageError(std::string("--cluster: ") + e.what());
  }
}

void apply_library_flag(ClusterSpec& cluster, const std::string& value) {
  if (value == "none") {
    cluster.library = CollectiveLibrary{};
    return;
  }
  const std::size_t colon = value.find(':');
  const std::string name = value.substr(0, colon);
  if (name != "nccl" && name != "rccl") {
    throw UsageError("--library: expected nccl, rccl (each optionally :GENERATION, e.g. nccl:hopper) or none, got '" +
                     value + "'");
  }
  std::string generation = colon == std::string::npos ? "" : value.substr(colon + 1);
  if (colon != std::string::npos && generation.empty()) {
    throw UsageError("--library: expected a generation of volta, ampere, hopper or blackwell after '" + name +
                     ":', got nothing (without the ':', the accelerator's own)");
  }
  if (generation.empty()) {
    const std::string& accelerator = cluster.node.accelerator;
    generation = name == "nccl" ? generation_of_accelerator(accelerator)
                                : contemporary_generation_of_amd_accelerator(accelerator);
    if (generation.empty()) {
      throw UsageError("--library: cannot tell the GPU generation of " + accelerator + " (" +
                       (name == "nccl" ? "an NVIDIA " + nvidia_part_list() : "an AMD Instinct " + amd_part_list()) +
                       "); give it, e.g. " + name + ":hopper (volta, ampere, hopper or blackwell)");
    }
  }
  CollectiveLibrary library;
  library.name = name;
  library.msccl = name == "rccl" && rccl_msccl_by_default(cluster.node.accelerator);  // (RCCL's default there)
  if (!parse_generation(generation, library.generation)) {
    throw UsageError("--library: expected a generation of volta, ampere, hopper or blackwell after '" + name +
                     ":', got '" + generation + "'");
  }
  cluster.library = library;
}

}  // namespace dtsim::cli
