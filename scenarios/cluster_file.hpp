// Cluster files: the JSON description of a cluster (see docs/clusters.md for every field, its default and range).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>

#include "models/cluster.hpp"

namespace dtsim {

// Reads {"cluster": {...}}; throws ScenarioError naming the JSON path of the first problem.
ClusterSpec parse_cluster(const nlohmann::json& document);
// Reads and parses a file; unreadable files and JSON syntax errors are ScenarioErrors naming the file.
ClusterSpec load_cluster_file(const std::string& path);
// The field tables as Markdown (docs/clusters.md is generated from it).
std::string cluster_fields_markdown();

}  // namespace dtsim
