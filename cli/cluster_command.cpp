// `dtsim cluster FILE`: what a cluster file describes, as dtsim builds it: sizes, diameter, bisection bandwidth,
// and optionally the SimGrid platform file.
#include <array>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/collective_runs.hpp"
#include "cli/commands.hpp"
#include "cli/library_flag.hpp"
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "reports/progress.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/units.hpp"
#include "sim/platform_xml.hpp"

namespace dtsim::cli {
namespace {

constexpr double max_analysis_s = 300;  // the longest diameter and bisection run without --no-bisection

constexpr std::array<FlagSpec, 4> cluster_command_flags{{
    {"nodes", "N", "from the file", "number of nodes to build"},
    {"xml", "FILE", "", "also write the cluster as a SimGrid platform file (at most 1024 accelerators)"},
    {"json", "", "", "print one JSON object instead of text"},
    {"no-bisection", "", "", "skip the max-flow bisection and the diameter (large clusters)"},
}};

std::string link_text(const LinkSpec& link) {
  return format_bits_per_s(link.bandwidth_Bps) + " (" + format_rate_Bps(link.bandwidth_Bps) + "), " +
         format_seconds(link.latency_s);
}

std::string fabric_text(const FabricSpec& f) {
  std::ostringstream out;
  out << to_string(f.kind);
  switch (f.kind) {
    case FabricKind::fat_tree:
      out << ", radix " << f.radix << ", " << (f.levels == 0 ? std::string("auto") : std::to_string(f.levels))
          << " levels, oversubscription " << f.oversubscription << ":1";
      if (f.rails) out << ", rail-optimised (NIC i of every node on rail i's leaves)";
      break;
    case FabricKind::torus:
    case FabricKind::ring: {
      out << ", dimensions ";
      if (f.dimensions.empty()) out << "sized to the nodes";
      for (std::size_t i = 0; i < f.dimensions.size(); ++i)
        out << (i ? "x" : "") << f.dimensions[i];
      out << ", " << f.endpoints_per_switch << " endpoints per switch";
      break;
    }
    case FabricKind::dragonfly:
      out << ", " << f.groups << " groups x " << f.routers_per_group << " routers, " << f.global_links_per_router
          << " global links per router, " << f.endpoints_per_switch << " endpoints per router";
      break;
    case FabricKind::star: break;
  }
  if (f.kind != FabricKind::star) out << "; links " << link_text(f.link);
  if (f.kind == FabricKind::dragonfly) out << "; global links " << link_text(f.global_link);
  return out.str();
}

}  // namespace

const char* cluster_usage() {
  static const std::string text =
      "usage: dtsim cluster NAME|FILE [flags]\n"
      "Builds the cluster a cluster file describes (a built-in name such as dgx-a100, or a path; `dtsim help\n"
      "cluster-file` lists every field) and prints its size, the longest route between accelerators, and the\n"
      "bisection bandwidth: the max-flow between the first and the second half of the accelerators.\n\n" +
      flags_help(cluster_command_flags);
  return text.c_str();
}

const char* cluster_file_help() {
  static const std::string text =
      "Cluster files: every field, its default and what it accepts.\n\n" + cluster_fields_markdown();
  return text.c_str();
}

int cluster_command(std::span<char* const> args, std::ostream& out) {
  if (args.empty() || std::string_view(args[0]).starts_with("--")) {
    throw UsageError("expected a cluster first (a built-in name or a file), e.g. dtsim cluster dgx-a100");
  }
  const std::string path = args[0];
  if (path.empty()) throw UsageError("expected a cluster first (a built-in name or a file), got ''");
  const Flags flags(cluster_command_flags, args.subspan(1));
  ClusterSpec spec;
  try {
    spec = cluster_by_name_or_file(path);  // a built-in name too, as --cluster takes it
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  spec.nodes = parse_nodes(flags, spec);
  const auto started = std::chrono::steady_clock::now();
  std::optional<Topology> topology;
  try {
    topology.emplace(spec);
  } catch (const TopologyError& e) {  // (the node count from --nodes, or from the file's own nodes field)
    const std::string nodes = std::to_string(spec.nodes);
    throw UsageError((flags.has("nodes") ? "--nodes " + nodes : path + ": cluster.nodes = " + nodes) + ": " + e.what());
  }
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const bool analyse = !flags.has("no-bisection");
  if (analyse) {
    // the diameter searches the graph from every accelerator: about 7 ns a vertex or link searched on the 2-core VM
    // of docs/benchmarks.md (1024 DGX H100 nodes: 8192 searches of 85,504 vertices and links, 4.6 s)
    const long double searched = static_cast<long double>(topology->accelerators()) *
                                 (static_cast<long double>(topology->vertex_count()) + topology->links().size());
    const double estimate_s = static_cast<double>(searched * 7e-9L);
    if (estimate_s > max_analysis_s) {
      throw UsageError((flags.has("nodes") ? "--nodes " + std::to_string(spec.nodes) : path) +
                       ": the diameter and bisection of " + std::to_string(topology->accelerators()) +
                       " accelerators would take about " + format_seconds(estimate_s) + " (at most " +
                       format_seconds(max_analysis_s) +
                       "); --no-bisection builds and describes the cluster without them");
    }
  }
  int diameter = -1;
  if (analyse) {  // (a search from every accelerator: on a terminal, a progress line with the time left)
    const int accelerators = topology->accelerators();
    ProgressLine progress("cluster: the diameter (--no-bisection skips it)",
                          static_cast<std::size_t>((accelerators + Topology::diameter_progress_block - 1) /
                                                   Topology::diameter_progress_block));
    diameter = topology->diameter_hops([&](int searched) {
      progress.next(std::to_string(searched) + " of " + std::to_string(accelerators) + " accelerators");
    });
  }
  const double bisection = analyse ? topology->bisection_Bps() : -1;
  if (flags.has("xml")) {
    const std::string xml = flags.get("xml");
    try {
      write_file_atomically(xml, [&](std::ostream& file) { write_platform_xml(*topology, file); });
    } catch (const std::exception& e) {  // too many routes, or a path that cannot be written
      throw UsageError("--xml: " + std::string(e.what()));
    }
  }
  int counts[6] = {};
  for (int v = 0; v < topology->vertex_count(); ++v)
    ++counts[static_cast<int>(topology->vertex_kind(v))];
  const NodeSpec& node = spec.node;
  if (flags.has("json")) {
    nlohmann::json j{{"name", spec.name},
                     {"nodes", spec.nodes},
                     {"accelerators", topology->accelerators()},
                     {"accelerators_per_node", node.accelerators},
                     {"nics_per_node", node.nics},
                     {"fabric", to_string(spec.fabric.kind)},
                     {"vertices", topology->vertex_count()},
                     {"links", topology->links().size()},
                     {"fabric_switches", topology->fabric_switches()},
                     {"nvls", node.nvls},
                     {"sharp", spec.fabric.sharp},
                     {"build_s", build_s}};
    if (analyse) {
      j["diameter_links"] = diameter;
      j["bisection_Bps"] = bisection;
    }
    out << j.dump() << '\n';
    return 0;
  }
  out << "cluster " << spec.name << ": " << spec.nodes << " nodes x " << node.accelerators << ' ' << node.accelerator
      << " = " << topology->accelerators() << " accelerators\n";
  out << "  node       " << to_string(node.intra_kind);
  if (node.intra_kind != IntraKind::pcie) out << " " << link_text(node.intra);
  if (node.nvls) out << " (reduces in the switch: NVLS)";
  out << "; pcie " << link_text(node.pcie) << "; " << node.nics << " NIC" << (node.nics > 1 ? "s " : " ")
      << link_text(node.nic) << "; reduce " << format_rate_Bps(node.reduce_Bps) << '\n';
  out << "  fabric     " << fabric_text(spec.fabric);
  if (spec.fabric.sharp) out << " (switches reduce: SHARP)";
  out << '\n';
  out << "  graph      " << topology->vertex_count() << " vertices (" << counts[0] << " accelerators, " << counts[1]
      << " PCIe switches, " << counts[2] << " CPUs, " << counts[3] << " NVSwitches, " << counts[4] << " NICs, "
      << counts[5] << " fabric switches), " << topology->links().size() << " links, built in "
      << format_seconds(build_s) << '\n';
  if (analyse) {
    out << "  diameter   " << diameter << " links between the farthest accelerators\n";
    out << "  bisection  " << format_rate_Bps(bisection) << " (" << format_bits_per_s(bisection)
        << ") one way between the two halves of the accelerators, "
        << format_rate_Bps(bisection / (topology->accelerators() / 2)) << " per accelerator of a half\n";
  }
  if (spec.fabric.sharp) {  // the aggregation tree sharp gets from the fabric (local rank 0's; every rail's alike)
    std::vector<int> firsts;
    for (int n = 0; n < spec.nodes; ++n)
      firsts.push_back(n * node.accelerators);
    const Topology::AggregationShape shape = topology->aggregation_shape(firsts);
    out << "  sharp      one aggregation tree a local rank: ";
    if (shape.leaf_ranks >= static_cast<std::uint32_t>(spec.nodes)) {
      out << "all " << spec.nodes << " nodes under one leaf switch, its root";
    } else {
      out << shape.leaf_ranks << " node" << (shape.leaf_ranks > 1 ? "s" : "") << " a leaf switch";
      if (shape.fanin < (1U << 28)) out << ", " << shape.fanin << " switches under each above";
    }
    out << " (sharp's --leaf-ranks, --fanin)\n";
  }
  if (flags.has("xml")) out << "  platform   written to " << flags.get("xml") << '\n';
  out << "  source     " << spec.source << '\n';
  return 0;
}

}  // namespace dtsim::cli
