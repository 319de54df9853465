// Clusters the library tests share.
#pragma once

#include <string>

#include "scenarios/cluster_file.hpp"

namespace dtsim::test {

// NCCL on `generation` GPUs, 10 us a launch, as the cluster's collective library.
inline void use_nccl(ClusterSpec& spec, GpuGeneration generation) {
  spec.library.name = "nccl";
  spec.library.generation = generation;
  spec.library.launch_s = 10e-6;
}

// The built-in dgx-a100 on `nodes` nodes; with NCCL on Ampere, 10 us a launch, when `library`.
inline ClusterSpec a100_nodes(int nodes, bool library = true) {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-a100.json");
  spec.nodes = nodes;
  if (library) use_nccl(spec, GpuGeneration::ampere);
  return spec;
}

// A built-in cluster file on `nodes` nodes over a fat-tree of radix `radix` (levels as many as it needs) and the given
// oversubscription.
inline ClusterSpec fat_tree_cluster(const std::string& file, int nodes, int radix, double oversubscription = 1) {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/" + file);
  spec.nodes = nodes;
  spec.fabric.kind = FabricKind::fat_tree;
  spec.fabric.radix = radix;
  spec.fabric.levels = 0;
  spec.fabric.oversubscription = oversubscription;
  return spec;
}

}  // namespace dtsim::test
