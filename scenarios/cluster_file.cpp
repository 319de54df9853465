#include "scenarios/cluster_file.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "scenarios/json_reader.hpp"
#include "scenarios/units.hpp"

namespace dtsim {
namespace {

constexpr double max_count = 1 << 20;

constexpr std::array<FieldSpec, 2> link_fields{{
    value_field("bandwidth", FieldType::bandwidth, "",
                "bandwidth of the link in each direction (links are full duplex)"),
    value_field("latency", FieldType::duration, "0.5us", "one-way latency of the link, switch delay included"),
}};

// Per-message gaps (LogGP's g: what each further message of a step costs its sender; models/alpha_beta.hpp). Defaults
// by link kind, from published small-message rates (docs/clusters.md has the sources):
//   NIC: 0.3us, MPI over InfiniBand/RoCE (osu_bw/osu_mbw_mr at 1 B on ConnectX-5/6: 0.25-0.56 us); MPI over kernel
//        TCP is about 2us (osu_bw at 1 B over 10 GbE: 1.9-3.2 us): cluster files of TCP clusters say so.
//   NVLink/NVSwitch: 0.6us (NCCL's per-step hardware latency for NVLink with its LL protocol, src/graph/tuning.cc;
//        an inference: the per-step cost of a GPU-driven send).
//   PCIe between accelerators: 2us (cudaMemcpyPeerAsync back to back with P2P, cuda-samples
//        p2pBandwidthLatencyTest: 1.8-2.3 us).
constexpr std::array<FieldSpec, 3> pcie_fields{{
    value_field("bandwidth", FieldType::bandwidth, "",
                "bandwidth of the link in each direction (links are full duplex)"),
    value_field("latency", FieldType::duration, "0.5us", "one-way latency of the link, switch delay included"),
    value_field("message_gap", FieldType::duration, "2us",
                "per-message gap of a send between accelerators through PCIe: each further send of a step is posted "
                "this much later (a route to the NIC pays the NIC's instead)"),
}};

constexpr std::array<FieldSpec, 5> intra_fields{{
    choice_field("kind", "",
                 "nvswitch: one link per accelerator to a switch; nvlink: a direct link between every pair; pcie: "
                 "through the PCIe switches (the pcie links)",
                 "nvswitch|nvlink|pcie"),
    required_when(
        value_field("bandwidth", FieldType::bandwidth, "",
                    "nvswitch: each accelerator's link to the switch; nvlink: each pair's link (not for pcie)"),
        "kind is nvswitch or nvlink"),
    value_field("latency", FieldType::duration, "0.5us", "one-way latency of an intra-node link"),
    value_field("message_gap", FieldType::duration, "0.6us",
                "nvswitch, nvlink: per-message gap of a send inside the node (each further send of a step is posted "
                "this much later); not for pcie (the pcie links' gap applies)"),
    value_field(
        "nvls", FieldType::boolean, "false",
        "nvswitch: the switch reduces data in flight (NVLink SHARP: third-generation NVSwitch, H100 and later), "
        "so NCCL's NVLS algorithm (--algorithm nvls) can run; false: it cannot"),
}};

constexpr std::array<FieldSpec, 4> nic_fields{{
    ranged_field("count", FieldType::integer, "1",
                 "NICs per node; NIC j serves accelerators [j A/count, (j+1) A/count)", 1, 64),
    value_field("bandwidth", FieldType::bandwidth, "", "each NIC's bandwidth per direction"),
    value_field("latency", FieldType::duration, "0.5us",
                "one-way latency of the NIC and its cable to the first switch"),
    value_field("message_gap", FieldType::duration, "0.3us",
                "per-message gap of a send that leaves the node: each further send of a step is posted this much "
                "later (0.3us: MPI over InfiniBand/RoCE; about 2us over kernel TCP)"),
}};

constexpr std::array<FieldSpec, 9> node_fields{{
    value_field("accelerator", FieldType::text, "gpu", "what a rank runs on (a name for reports)"),
    ranged_field("accelerators", FieldType::integer, "1", "accelerators (ranks) per node", 1, 1024),
    value_field("reduce_rate", FieldType::bandwidth, "", "bytes one accelerator sums per second in a reduction"),
    ranged_field("compute_rate_while_transporting", FieldType::number, "1",
                 "the fraction of its speed a rank's compute keeps while its gradients are on the wire, where the "
                 "transport takes the same processor (kernel TCP); 1: unaffected (RDMA, GPUDirect)",
                 0.01, 1),
    ranged_field("transport_rate_while_computing", FieldType::number, "1",
                 "the fraction of its rate a rank's transport keeps while the rank computes, where both share one "
                 "processor (kernel TCP under a CPU quota); 1: unaffected (RDMA, GPUDirect)",
                 0.01, 1),
    object_field("intra", true, "the interconnect between a node's accelerators", intra_fields),
    object_field("pcie", true, "the PCIe links: accelerator to PCIe switch, PCIe switch to NIC", pcie_fields),
    object_field("nics", true, "the network interfaces", nic_fields),
    object_field("cpu_link", false, "between a node's PCIe switches (through the CPUs); default: the pcie link",
                 pcie_fields),
}};

constexpr std::array<FieldSpec, 12> fabric_fields{{
    choice_field("kind", "", "the network between nodes", "star|fat-tree|torus|dragonfly|ring"),
    object_field("link", false,
                 "switch-to-switch links (default: as fast as a NIC, 0.5us); not for a star, whose nodes meet at one "
                 "switch through their NICs",
                 link_fields),
    required_when(ranged_field("radix", FieldType::integer, "",
                               "fat-tree: ports per switch (even): k/2 down and k/2 up", 2, 1024),
                  "kind is fat-tree"),
    ranged_field("levels", FieldType::integer, "auto",
                 "fat-tree: switch levels, 1 (one switch) to 4; auto: the fewest that hold the nodes", 1, 4),
    ranged_field("oversubscription", FieldType::number, "1",
                 "fat-tree: endpoint ports per uplink at the leaf switches (k/2 / oversubscription uplinks)", 1,
                 std::numeric_limits<double>::infinity()),
    value_field(
        "rails", FieldType::boolean, "false",
        "fat-tree: rail-optimised, NIC i of every node on leaf switches of rail i alone (as DGX SuperPODs "
        "are cabled; with three levels, each rail fills whole pods of its own where they fit); false: a node's NICs on "
        "consecutive leaf ports"),
    value_field("sharp", FieldType::boolean, "false",
                "star and fat-tree: the switches reduce data in the network (InfiniBand SHARP, e.g. Quantum and "
                "Quantum-2 switches), so the sharp allreduce (NCCL's CollNet) can run; false: they cannot"),
    required_when(ranged_field("dimensions", FieldType::integer_list, "",
                               "torus: switches along each of 2 or 3 dimensions; ring: one entry (default: enough "
                               "switches for the nodes)",
                               1, 4096),
                  "kind is torus"),
    ranged_field("endpoints_per_switch", FieldType::integer, "1", "torus, ring, dragonfly: NIC ports on each switch", 1,
                 1024),
    required_when(ranged_field("groups", FieldType::integer, "", "dragonfly: groups of routers", 2, 4096),
                  "kind is dragonfly"),
    required_when(ranged_field("routers_per_group", FieldType::integer, "",
                               "dragonfly: routers per group, all-to-all inside the group", 1, 1024),
                  "kind is dragonfly"),
    required_when(ranged_field("global_links_per_router", FieldType::integer, "",
                               "dragonfly: links from each router to other groups; routers_per_group x this >= groups "
                               "- 1",
                               1, 1024),
                  "kind is dragonfly"),
}};

// The collective library (models/collective_library.hpp): NCCL's protocol constants by GPU generation, and the launch
// cost a host adds to each call. Default 0: NCCL's base latency holds a call's fixed cost, and the launches the fit
// rows of validation/published/collectives.csv imply are 0 (clamped; negative on 3 of 5 systems) or more on the
// others (8.7 us on a virtual machine, 62 us over TCP offload), median 0 (docs/validation.md, "Collectives").
constexpr std::array<FieldSpec, 8> library_fields{{
    choice_field("name", "", "the library: nccl (NVIDIA), rccl (AMD; dtsim applies NCCL's published constants to it)",
                 "nccl|rccl"),
    choice_field(
        "generation", "",
        "the GPU generation whose tuning constants apply (LL's bandwidth cap, NVLink's share of its line rate)",
        "volta|ampere|hopper|blackwell"),
    value_field("launch", FieldType::duration, "0us",
                "fixed cost of each collective call before its base latency: kernel launch and host overhead; at most "
                "10ms"),
    value_field("protocols", FieldType::text, "ll,ll128,simple",
                "the protocols the tuner may choose from, comma-separated (NCCL_PROTO)"),
    value_field("allreduce_algorithms", FieldType::text, "ring,tree,nvls,nvlstree,collnet",
                "the algorithms the tuner may choose for an allreduce, comma-separated in any case, ring or tree among "
                "them (NCCL_ALGO=\"allreduce:...\"; collnet: CollNet, run as `sharp`, with NVLS in nodes where they "
                "reduce); --algorithm still forces any"),
    ranged_field("net_latency_factor", FieldType::number, "1",
                 "NCCL's network latencies (a ring or tree step, a level of the NVLS tree, CollNet's network part) "
                 "times this: its tables are InfiniBand's, and slower transports (EFA, TCP offload) take longer",
                 0.1, 100),
    value_field(
        "msccl", FieldType::boolean, "false",
        "rccl: MSCCL's algorithms run where RCCL ships one (an allreduce of up to 16 MiB on one node of 8 fully "
        "connected GPUs: all-pairs, as `direct`); RCCL enables MSCCL by default on MI300X; false: the tuner "
        "always chooses"),
    required_when(value_field("link_rate", FieldType::bandwidth, "",
                              "the rate per intra-node link (each way) the library's topology model counts on, at most "
                              "node.intra.bandwidth (RCCL on MI300X: 48GBps a xGMI link, GFX94X_XGMI_WIDTH in its "
                              "src/graph/topo.h); absent: NCCL's NVLink share of the line rate for the generation"),
                  "the library counts its own rate"),
}};

constexpr std::array<FieldSpec, 7> cluster_fields{{
    value_field("name", FieldType::text, "cluster", "a name for reports"),
    value_field("source", FieldType::text, "unspecified", "where the numbers come from (datasheets, papers)"),
    ranged_field("nodes", FieldType::integer, "1", "number of nodes (dtsim's --nodes overrides it)", 1, max_count),
    object_field("node", true, "every node's hardware", node_fields),
    object_field("fabric", true, "the network between nodes", fabric_fields),
    object_field("global_link", false, "dragonfly: links between groups (default: the fabric link)", link_fields),
    object_field("library", false,
                 "the collective library (NCCL's protocols, launch and per-step costs on top of the links); absent: "
                 "plain messages",
                 library_fields),
}};

constexpr std::array<FieldSpec, 1> cluster_document_fields{{
    object_field("cluster", true, "the cluster", cluster_fields),
}};

LinkSpec read_link(const JsonObject& o) { return LinkSpec{o.bandwidth_Bps("bandwidth"), o.seconds("latency")}; }
// A link an accelerator's sends start on, with its per-message gap.
LinkSpec read_endpoint_link(const JsonObject& o) {
  LinkSpec link = read_link(o);
  link.message_gap_s = o.seconds("message_gap");
  return link;
}

CollectiveLibrary read_library(const JsonObject& o) {
  CollectiveLibrary library;
  library.name = o.choice("name");
  parse_generation(o.choice("generation"), library.generation);
  library.launch_s = o.seconds("launch");
  if (library.launch_s > 0.01) {
    throw ScenarioError(o.path_of("launch") + ": expected at most 10ms, got " + std::to_string(library.launch_s * 1e3) +
                        " ms");
  }
  library.net_latency_factor = o.number("net_latency_factor");
  library.msccl = o.boolean("msccl");
  if (library.msccl && library.name != "rccl") {
    throw ScenarioError(o.path_of("msccl") + ": only for name \"rccl\" (MSCCL's algorithms are RCCL's), got \"" +
                        library.name + "\"");
  }
  library.allow_ll = library.allow_ll128 = library.allow_simple = false;
  const std::string list = o.text("protocols");
  for (const std::string& item : split_list(list)) {
    Protocol p = Protocol::none;
    bool automatic = false;
    if (!parse_protocol(item, p, automatic) || p == Protocol::none) {
      throw ScenarioError(o.path_of("protocols") + ": expected a comma-separated list of ll, ll128 and simple, got \"" +
                          list + "\"");
    }
    bool& allowed = p == Protocol::ll      ? library.allow_ll
                    : p == Protocol::ll128 ? library.allow_ll128
                                           : library.allow_simple;
    if (allowed) throw ScenarioError(o.path_of("protocols") + ": " + item + " is listed twice in \"" + list + "\"");
    allowed = true;
  }
  const std::string algorithms = o.text("allreduce_algorithms");
  library.allreduce_algorithms = 0;
  for (std::string item : split_list(algorithms)) {
    std::transform(item.begin(), item.end(), item.begin(),  // (NCCL_ALGO ignores case: "Ring,Tree")
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    LibraryAlgorithm a = LibraryAlgorithm::ring;
    if (!parse_library_algorithm(item, a) || a == LibraryAlgorithm::pat) {
      throw ScenarioError(o.path_of("allreduce_algorithms") +
                          ": expected a comma-separated list of ring, tree, nvls, nvlstree and collnet, got \"" +
                          algorithms + "\"");
    }
    const auto bit = static_cast<std::uint8_t>(1U << static_cast<unsigned>(a));
    if ((library.allreduce_algorithms & bit) != 0) {  // (as protocols: each once)
      throw ScenarioError(o.path_of("allreduce_algorithms") + ": " + item + " is listed twice in \"" + algorithms +
                          "\"");
    }
    library.allreduce_algorithms |= bit;
  }
  if (!library.allows_allreduce(LibraryAlgorithm::ring) && !library.allows_allreduce(LibraryAlgorithm::tree)) {
    throw ScenarioError(o.path_of("allreduce_algorithms") +
                        ": must include ring or tree (they run every allreduce; the others need switches that "
                        "reduce or whole nodes), got \"" +
                        algorithms + "\"");
  }
  return library;
}

// Fields that belong to other fabric kinds are errors, not silently ignored.
void refuse_foreign(const JsonObject& fabric, std::string_view kind, std::initializer_list<std::string_view> keys,
                    std::string_view owner) {
  for (std::string_view key : keys) {
    if (fabric.has(key)) {
      throw ScenarioError(fabric.path_of(key) + ": only for " + std::string(owner) + " fabrics, this one is " +
                          std::string(kind));
    }
  }
}

FabricSpec read_fabric(const JsonObject& f, const JsonObject& cluster, const NodeSpec& node) {
  FabricSpec fabric;
  const std::string kind = f.choice("kind");
  fabric.link = f.has("link") ? read_link(f.object("link")) : LinkSpec{node.nic.bandwidth_Bps, 0.5e-6};
  fabric.endpoints_per_switch = static_cast<int>(f.integer("endpoints_per_switch"));
  const auto fat_keys = {std::string_view("radix"), std::string_view("levels"), std::string_view("oversubscription"),
                         std::string_view("rails")};
  const auto torus_keys = {std::string_view("dimensions")};
  const auto fly_keys = {std::string_view("groups"), std::string_view("routers_per_group"),
                         std::string_view("global_links_per_router")};
  if (kind != "dragonfly" && cluster.has("global_link")) {
    throw ScenarioError(cluster.path_of("global_link") + ": only for dragonfly fabrics, this one is " + kind);
  }
  if (kind == "star" || kind == "fat-tree") {
    if (f.has("endpoints_per_switch")) {
      throw ScenarioError(f.path_of("endpoints_per_switch") + ": only for torus, ring and dragonfly fabrics");
    }
  }
  fabric.sharp = f.has("sharp") && f.boolean("sharp");
  if (fabric.sharp && kind != "star" && kind != "fat-tree") {
    throw ScenarioError(f.path_of("sharp") + ": only for star and fat-tree fabrics (switches in a tree), this one is " +
                        kind);
  }
  if (kind == "star") {
    fabric.kind = FabricKind::star;
    if (f.has("link")) {  // (a star's only links are the NICs' own, to its one switch)
      throw ScenarioError(f.path_of("link") + ": only for fabrics with switch-to-switch links (fat-tree, torus, " +
                          "ring, dragonfly): a star's nodes meet at one switch through their NICs (cluster.node.nics)");
    }
    refuse_foreign(f, kind, fat_keys, "fat-tree");
    refuse_foreign(f, kind, torus_keys, "torus and ring");
    refuse_foreign(f, kind, fly_keys, "dragonfly");
  } else if (kind == "fat-tree") {
    fabric.kind = FabricKind::fat_tree;
    refuse_foreign(f, kind, torus_keys, "torus and ring");
    refuse_foreign(f, kind, fly_keys, "dragonfly");
    fabric.radix = static_cast<int>(f.integer("radix"));
    fabric.levels = f.has("levels") ? static_cast<int>(f.integer("levels")) : 0;  // 0: the fewest that fit
    fabric.oversubscription = f.number("oversubscription");
    fabric.rails = f.has("rails") && f.boolean("rails");
    if (fabric.radix % 2 != 0) {
      throw ScenarioError(f.path_of("radix") + ": expected an even number of ports, got " +
                          std::to_string(fabric.radix));
    }
    const double up = fabric.radix / 2 / fabric.oversubscription;
    if (fabric.levels != 1 && (up < 1 || up != static_cast<int>(up))) {
      std::ostringstream msg;
      msg << f.path_of("oversubscription") << ": expected a divisor of radix/2 = " << fabric.radix / 2
          << " (leaf uplinks must be whole), got " << fabric.oversubscription;
      throw ScenarioError(msg.str());
    }
  } else if (kind == "torus" || kind == "ring") {
    fabric.kind = kind == "torus" ? FabricKind::torus : FabricKind::ring;
    refuse_foreign(f, kind, fat_keys, "fat-tree");
    refuse_foreign(f, kind, fly_keys, "dragonfly");
    if (kind == "torus" || f.has("dimensions")) {
      for (long long d : f.integer_list("dimensions"))
        fabric.dimensions.push_back(static_cast<int>(d));
    }
    const std::size_t want_min = kind == "torus" ? 2 : 1;
    const std::size_t want_max = kind == "torus" ? 3 : 1;
    if (!fabric.dimensions.empty() && (fabric.dimensions.size() < want_min || fabric.dimensions.size() > want_max)) {
      throw ScenarioError(f.path_of("dimensions") + ": expected " +
                          (kind == "torus" ? std::string("2 or 3 entries") : std::string("1 entry")) + ", got " +
                          std::to_string(fabric.dimensions.size()));
    }
  } else {
    fabric.kind = FabricKind::dragonfly;
    refuse_foreign(f, kind, fat_keys, "fat-tree");
    refuse_foreign(f, kind, torus_keys, "torus and ring");
    fabric.groups = static_cast<int>(f.integer("groups"));
    fabric.routers_per_group = static_cast<int>(f.integer("routers_per_group"));
    fabric.global_links_per_router = static_cast<int>(f.integer("global_links_per_router"));
    if (fabric.routers_per_group * fabric.global_links_per_router < fabric.groups - 1) {
      throw ScenarioError(f.path_of("global_links_per_router") +
                          ": expected routers_per_group x this >= groups - 1 = " + std::to_string(fabric.groups - 1) +
                          " so that every pair of groups is linked, got " +
                          std::to_string(fabric.global_links_per_router));
    }
    fabric.global_link = cluster.has("global_link") ? read_link(cluster.object("global_link")) : fabric.link;
  }
  return fabric;
}

}  // namespace

ClusterSpec parse_cluster(const nlohmann::json& document) {
  const JsonObject root(document, "", cluster_document_fields);
  const JsonObject c = root.object("cluster");
  // errors name paths from "cluster", as users read them
  ClusterSpec spec;
  spec.name = c.text("name");
  if (spec.name.empty()) throw ScenarioError(c.path_of("name") + ": expected a non-empty string");
  spec.source = c.text("source");
  spec.nodes = static_cast<int>(c.integer("nodes"));
  const JsonObject n = c.object("node");
  NodeSpec& node = spec.node;
  node.accelerator = n.text("accelerator");
  if (node.accelerator.empty()) throw ScenarioError(n.path_of("accelerator") + ": expected a non-empty string");
  node.accelerators = static_cast<int>(n.integer("accelerators"));
  node.reduce_Bps = n.bandwidth_Bps("reduce_rate");
  node.compute_rate_while_transporting = n.number("compute_rate_while_transporting");
  node.transport_rate_while_computing = n.number("transport_rate_while_computing");
  const JsonObject intra = n.object("intra");
  const std::string kind = intra.choice("kind");
  node.intra_kind = kind == "nvswitch" ? IntraKind::nvswitch : kind == "nvlink" ? IntraKind::nvlink : IntraKind::pcie;
  node.nvls = intra.has("nvls") && intra.boolean("nvls");
  if (node.nvls && node.intra_kind != IntraKind::nvswitch) {
    throw ScenarioError(intra.path_of("nvls") +
                        ": only for kind \"nvswitch\" (in-switch reduction needs a switch), got \"" + kind + "\"");
  }
  if (node.intra_kind == IntraKind::pcie) {
    if (intra.has("bandwidth")) {
      throw ScenarioError(intra.path_of("bandwidth") + ": not for kind \"pcie\" (the pcie links carry that traffic)");
    }
    if (intra.has("message_gap")) {
      throw ScenarioError(intra.path_of("message_gap") +
                          ": not for kind \"pcie\" (the pcie links' message_gap applies)");
    }
    node.intra = LinkSpec{0.0, intra.seconds("latency")};
  } else {
    node.intra = read_endpoint_link(intra);
  }
  node.pcie = read_endpoint_link(n.object("pcie"));
  node.cpu_link = n.has("cpu_link") ? read_endpoint_link(n.object("cpu_link")) : node.pcie;
  const JsonObject nics = n.object("nics");
  node.nics = static_cast<int>(nics.integer("count"));
  node.nic = read_endpoint_link(nics);
  if (node.nics > node.accelerators) {
    throw ScenarioError(nics.path_of("count") + ": expected at most one NIC per accelerator (" +
                        std::to_string(node.accelerators) + "), got " + std::to_string(node.nics));
  }
  spec.fabric = read_fabric(c.object("fabric"), c, node);
  if (c.has("library")) {
    const JsonObject library = c.object("library");
    spec.library = read_library(library);
    if (library.has("link_rate")) {
      const double rate_Bps = library.bandwidth_Bps("link_rate");
      if (node.intra_kind == IntraKind::pcie) {
        throw ScenarioError(library.path_of("link_rate") +
                            ": not with node.intra.kind \"pcie\" (the pcie links' rates are usable rates already)");
      }
      if (!(rate_Bps > 0) || rate_Bps > node.intra.bandwidth_Bps) {
        throw ScenarioError(library.path_of("link_rate") + ": expected more than 0 and at most node.intra.bandwidth (" +
                            std::to_string(node.intra.bandwidth_Bps / 1e9) + " GB/s), got " +
                            std::to_string(rate_Bps / 1e9) + " GB/s");
      }
      spec.library.intra_share = rate_Bps / node.intra.bandwidth_Bps;
    }
  }
  return spec;
}

ClusterSpec load_cluster_file(const std::string& path) {
  return parse_json_file(path, [&](const nlohmann::json& document) { return parse_cluster(document); });
}

std::string cluster_fields_markdown() { return fields_markdown("cluster", cluster_fields); }

}  // namespace dtsim
