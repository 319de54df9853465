// Clusters the library tests share.
#pragma once

#include <string>

#include "scenarios/cluster_file.hpp"

namespace dtsim::test {

// The built-in dgx-a100 on `nodes` nodes; with NCCL on Ampere, 10 us a launch, when `library`.
inline ClusterSpec a100_nodes(int nodes, bool library = true) {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-a100.json");
  spec.nodes = nodes;
  if (library) {
    spec.library.name = "nccl";
    spec.library.generation = GpuGeneration::ampere;
    spec.library.launch_s = 10e-6;
  }
  return spec;
}

}  // namespace dtsim::test
