// --cluster by name or path, and --library: run a cluster's collectives through a collective library (or none) without
// editing its file.
#pragma once

#include <string>

#include "cli/flags.hpp"
#include "models/cluster.hpp"

namespace dtsim::cli {

inline constexpr FlagSpec library_flag{
    "library", "NAME", "from the cluster file",
    "the cluster's collective library, replacing cluster.library: nccl or rccl, optionally with the GPU generation "
    "whose constants apply (nccl:hopper; volta, ampere, hopper or blackwell; when not given, nccl's is read from an "
    "NVIDIA node's accelerator, rccl's is an AMD Instinct node's NVIDIA contemporary, e.g. hopper for MI300X), with "
    "the library's defaults for every other field (MSCCL on for rccl on MI300X, as RCCL has it; docs/clusters.md); "
    "none: plain messages"};

// --cluster NAME|FILE: a path (anything with a '/' or a .json ending, or that exists) or a built-in cluster's name
// (data_dir/scenarios/clusters/NAME.json); a UsageError naming --cluster for one that cannot be read.
ClusterSpec cluster_from_flag(const std::string& value);
// The same resolution (a built-in name, or a path to a cluster file), its errors as ScenarioError without a flag's
// name (dtsim cluster's positional argument).
ClusterSpec cluster_by_name_or_file(const std::string& value);

// Replaces cluster.library as --library VALUE says; a UsageError naming --library for a value it does not accept, or
// a generation it cannot tell.
void apply_library_flag(ClusterSpec& cluster, const std::string& value);

}  // namespace dtsim::cli
