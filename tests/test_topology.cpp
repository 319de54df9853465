// Clusters: strict cluster files, the Boost.Graph topology (routes, bisection, diameter), and collectives simulated
// on routed fabrics with contention where it really occurs.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <simgrid/s4u.hpp>
#include <sstream>

#include "algorithms/registry.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/platform_xml.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

constexpr double gbps = 1e9 / 8;  // bytes per second in one Gbit/s

// One CPU per node, NIC and fabric links of `link_gbps`, PCIe far faster so that only the network matters.
ClusterSpec simple_cluster(int nodes, FabricSpec fabric, double link_gbps = 100) {
  ClusterSpec c;
  c.name = "test";
  c.nodes = nodes;
  c.node.accelerators = 1;
  c.node.reduce_Bps = 1e12;
  c.node.pcie = LinkSpec{1e12, 0.0};
  c.node.cpu_link = c.node.pcie;
  c.node.nic = LinkSpec{link_gbps * gbps, 1e-6};
  fabric.link = LinkSpec{link_gbps * gbps, 0.5e-6};
  fabric.global_link = fabric.link;
  c.fabric = fabric;
  return c;
}

FabricSpec fat_tree(int radix, int levels, double oversubscription) {
  FabricSpec f;
  f.kind = FabricKind::fat_tree;
  f.radix = radix;
  f.levels = levels;
  f.oversubscription = oversubscription;
  return f;
}

FabricSpec torus(std::vector<int> dims) {
  FabricSpec f;
  f.kind = FabricKind::torus;
  f.dimensions = std::move(dims);
  return f;
}

std::string expect_error(const std::string& text) {
  try {
    parse_cluster(nlohmann::json::parse(text));
  } catch (const ScenarioError& e) {
    return e.what();
  }
  FAIL("no error for " << text);
  return "";
}

const char* valid_cluster = R"({"cluster": {"nodes": 4,
  "node": {"accelerators": 2, "reduce_rate": "100GBps", "intra": {"kind": "nvlink", "bandwidth": "50GBps"},
           "pcie": {"bandwidth": "16GBps"}, "nics": {"bandwidth": "100Gbps"}},
  "fabric": {"kind": "fat-tree", "radix": 8, "oversubscription": 2}}})";

}  // namespace

TEST_CASE("cluster files: values with units, defaults, and one-line errors naming the JSON path") {
  const ClusterSpec c = parse_cluster(nlohmann::json::parse(valid_cluster));
  CHECK(c.nodes == 4);
  CHECK(c.node.accelerators == 2);
  CHECK(c.node.intra_kind == IntraKind::nvlink);
  CHECK(c.node.intra.bandwidth_Bps == Approx(50e9));
  CHECK(c.node.intra.latency_s == Approx(0.5e-6));  // the documented default
  CHECK(c.node.nic.bandwidth_Bps == Approx(12.5e9));
  CHECK(c.fabric.oversubscription == 2.0);
  CHECK(c.fabric.levels == 0);  // auto

  auto with = [](const std::string& from, const std::string& to) {
    std::string text = valid_cluster;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  CHECK(expect_error(with("\"oversubscription\": 2", "\"oversubscription\": 0.5")) ==
        "cluster.fabric.oversubscription: expected a number >= 1, got 0.5");
  CHECK(expect_error(with("\"radix\": 8", "\"radix\": 8, \"colour\": 1")) ==
        "cluster.fabric.colour: unknown key (accepted: kind, link, radix, levels, oversubscription, rails, sharp, "
        "dimensions, "
        "endpoints_per_switch, groups, routers_per_group, global_links_per_router)");
  CHECK_THAT(expect_error(with("\"100Gbps\"", "\"100Gbs\"")), Catch::StartsWith("cluster.node.nics.bandwidth: "));
  // a name is printed in tables, CSV and traces: a control character in it is refused, not printed raw
  CHECK(expect_error(with("{\"nodes\": 4,", "{\"name\": \"cpu\\u0000x\", \"nodes\": 4,")) ==
        "cluster.name: expected a string without control characters, got U+0000 at character 4");
  CHECK_THAT(expect_error(with("\"100Gbps\"", "100")),
             Catch::Equals("cluster.node.nics.bandwidth: expected a bandwidth string like \"100Gbps\" or \"25GBps\", "
                           "got 100"));
  CHECK_THAT(expect_error(with("\"accelerators\": 2", "\"accelerators\": 0")),
             Catch::Equals("cluster.node.accelerators: expected a whole number in [1, 1024], got 0"));
  CHECK_THAT(expect_error(with("\"fat-tree\"", "\"hypercube\"")),
             Catch::StartsWith("cluster.fabric.kind: expected \"star\", \"fat-tree\", \"torus\", \"dragonfly\" or "
                               "\"ring\", got \"hypercube\""));
  CHECK_THAT(expect_error(with("\"radix\": 8", "\"radix\": 8, \"dimensions\": [4, 4]")),
             Catch::StartsWith("cluster.fabric.dimensions: only for torus and ring fabrics"));
  CHECK_THAT(expect_error(with("\"oversubscription\": 2", "\"oversubscription\": 3")),
             Catch::StartsWith("cluster.fabric.oversubscription: expected a divisor of radix/2 = 4"));
  CHECK_THAT(expect_error(with("\"reduce_rate\": \"100GBps\", ", "")),
             Catch::StartsWith("cluster.node.reduce_rate: missing"));
  CHECK_THAT(expect_error(with("\"reduce_rate\": \"100GBps\", ",
                               "\"reduce_rate\": \"100GBps\", \"transport_rate_while_computing\": 0, ")),
             Catch::Equals("cluster.node.transport_rate_while_computing: expected a number in [0.01, 1], got 0"));
  CHECK_THAT(expect_error(with("\"reduce_rate\": \"100GBps\", ",
                               "\"reduce_rate\": \"100GBps\", \"compute_rate_while_transporting\": 1.5, ")),
             Catch::Equals("cluster.node.compute_rate_while_transporting: expected a number in [0.01, 1], got 1.5"));
  CHECK_THAT(expect_error("[1, 2]"), Catch::StartsWith("top level: expected an object"));
  const auto with_library = [&](const std::string& library) {
    return expect_error(with("\"nodes\": 4,", "\"nodes\": 4, \"library\": " + library + ","));
  };
  CHECK_THAT(with_library(R"({"name": "mpi", "generation": "ampere"})"),
             Catch::StartsWith("cluster.library.name: expected \"nccl\" or \"rccl\", got \"mpi\""));
  CHECK_THAT(with_library(R"({"name": "nccl"})"), Catch::StartsWith("cluster.library.generation: missing"));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "ampere", "protocols": "ll,fast"})"),
             Catch::StartsWith("cluster.library.protocols: expected a comma-separated list of ll, ll128 and simple"));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "ampere", "protocols": "ll,ll"})"),
             Catch::StartsWith("cluster.library.protocols: ll is listed twice in \"ll,ll\""));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "ampere", "allreduce_algorithms": "ring,tree,Ring"})"),
             Catch::StartsWith("cluster.library.allreduce_algorithms: ring is listed twice in \"ring,tree,Ring\""));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "ampere", "allreduce_algorithms": "ring,pat"})"),
             Catch::StartsWith("cluster.library.allreduce_algorithms: expected a comma-separated list of ring, tree, "
                               "nvls, nvlstree and collnet, got \"ring,pat\""));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "ampere", "allreduce_algorithms": ""})"),
             Catch::StartsWith("cluster.library.allreduce_algorithms: expected a comma-separated list"));
  const auto library_of = [&](const std::string& library) {
    return parse_cluster(nlohmann::json::parse(with("\"nodes\": 4,", "\"nodes\": 4, \"library\": " + library + ",")))
        .library;
  };
  CHECK(library_of(R"({"name": "nccl", "generation": "ampere"})").allreduce_restriction().empty());
  const CollectiveLibrary ring_tree =
      library_of(R"({"name": "nccl", "generation": "ampere", "allreduce_algorithms": "Ring,TREE"})");
  CHECK(ring_tree.allreduce_restriction() == "ring,tree");
  CHECK(ring_tree.allows_allreduce(LibraryAlgorithm::tree));
  CHECK(!ring_tree.allows_allreduce(LibraryAlgorithm::nvls_tree));
  CHECK(!ring_tree.allows_allreduce(LibraryAlgorithm::collnet));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "hopper", "allreduce_algorithms": "nvls,collnet"})"),
             Catch::StartsWith("cluster.library.allreduce_algorithms: must include ring or tree"));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "ampere", "launch": "1s"})"),
             Catch::StartsWith("cluster.library.launch: expected at most 10ms"));
  CHECK_THAT(with_library(R"({"name": "nccl", "generation": "hopper", "net_latency_factor": 0})"),
             Catch::StartsWith("cluster.library.net_latency_factor: expected a number in [0.1, 100]"));
  CHECK_THAT(
      with_library(R"({"name": "nccl", "generation": "hopper", "msccl": true})"),
      Catch::Equals("cluster.library.msccl: only for name \"rccl\" (MSCCL's algorithms are RCCL's), got \"nccl\""));
  CHECK_THAT(with_library(R"({"name": "rccl", "generation": "hopper", "msccl": "yes"})"),
             Catch::StartsWith("cluster.library.msccl: expected true or false"));
  CHECK_THAT(with_library(R"({"name": "rccl", "generation": "hopper", "link_rate": "0GBps"})"),
             Catch::StartsWith("cluster.library.link_rate: expected a bandwidth in [1bps"));
  CHECK_THAT(with_library(R"({"name": "rccl", "generation": "hopper", "link_rate": "1TBps"})"),
             Catch::StartsWith("cluster.library.link_rate: expected more than 0 and at most node.intra.bandwidth"));
  CHECK_THAT(with_library(R"({"name": "rccl", "generation": "hopper", "link_rate": "fast"})"),
             Catch::EndsWith("got 'fast'"));
  const ClusterSpec counted = parse_cluster(nlohmann::json::parse(
      with("\"nodes\": 4,",
           "\"nodes\": 4, \"library\": {\"name\": \"rccl\", \"generation\": \"hopper\", \"link_rate\": \"25GBps\"},")));
  CHECK(counted.library.intra_share == Approx(0.5));  // 25 of the intra links' 50 GB/s
  // the documentation table is generated from the same field specs the loader uses
  const std::string doc = cluster_fields_markdown();
  CHECK_THAT(doc, Catch::Contains("| `oversubscription` | a number >= 1 | `1` |"));
  CHECK_THAT(doc, Catch::Contains("`cluster.node.nics`"));
  // docs/clusters.md carries the same reference: regenerate it with `dtsim help cluster-file` when fields change
  std::ifstream file(std::string(DTSIM_SOURCE_DIR) + "/docs/clusters.md");
  const std::string committed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  CHECK_THAT(committed, Catch::Contains(doc));
}

TEST_CASE("every built-in cluster loads, routes, and runs a collective on both executors") {
  const std::filesystem::path dir = std::filesystem::path(DTSIM_SOURCE_DIR) / "scenarios" / "clusters";
  int files = 0;
  const std::string scenario_doc = scenario_fields_markdown();  // its `cluster` field lists the built-in ones
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    CAPTURE(entry.path().string());
    ++files;
    const std::string stem = entry.path().stem().string();
    bool listed = false;
    for (const char* before : {"(", " "}) {
      for (const char* after : {",", ")"})
        listed = listed || scenario_doc.find(before + stem + after) != std::string::npos;
    }
    CHECK(listed);
    ClusterSpec spec = load_cluster_file(entry.path().string());
    CHECK(spec.source.size() > 40);  // every number says where it comes from
    spec.nodes = 3;
    const Topology topology(spec);
    CHECK(topology.accelerators() == 3 * spec.node.accelerators);
    CHECK(!topology.route(0, topology.accelerators() - 1).empty());
    const Schedule ring = find_algorithm("ring").build(topology.accelerators(), 64000000, AlgorithmOptions{});
    AnalyticalOptions an;
    an.topology = &topology;
    an.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
    SimGridOptions sg;
    sg.topology = &topology;
    sg.accelerator_of = an.accelerator_of;
    const double analytical = run_analytical(ring, an).time_s;
    const double simulated = run_simgrid(ring, sg).time_s;
    CHECK(analytical > 0);
    // a ring in topology order crosses each link once per direction: no contention, both executors agree
    CHECK(simulated == Approx(analytical).epsilon(1e-6));
    // and it is bounded by its slowest hop: the NIC (or PCIe behind it) carrying 2 (P-1)/P n
    const double p = topology.accelerators();
    const double slowest = std::min(spec.node.nic.bandwidth_Bps, spec.node.pcie.bandwidth_Bps);
    CHECK(simulated >= 2 * (p - 1) / p * 64e6 / slowest);
  }
  CHECK(files == 12);
}

TEST_CASE("bisection bandwidth matches the textbook formulas for star, fat-tree and torus") {
  FabricSpec star;
  star.kind = FabricKind::star;
  // star: each half's endpoints limited by their own links, E/2 B
  CHECK(Topology(simple_cluster(16, star)).bisection_Bps() == Approx(8 * 100 * gbps));
  // non-blocking 2-level fat-tree of radix 8 (4 endpoints and 4 uplinks per leaf): E/2 B
  CHECK(Topology(simple_cluster(16, fat_tree(8, 2, 1))).bisection_Bps() == Approx(8 * 100 * gbps));
  // 4:1 oversubscribed: one uplink per leaf of 4 endpoints, E/2 B / 4
  CHECK(Topology(simple_cluster(16, fat_tree(8, 2, 4))).bisection_Bps() == Approx(2 * 100 * gbps));
  // 3-level non-blocking from radix 4 (k^3/4 = 16 endpoints)
  CHECK(Topology(simple_cluster(16, fat_tree(4, 3, 1))).bisection_Bps() == Approx(8 * 100 * gbps));
  // k-ary n-cube with wrap-around links: 2 k^(n-1) links cross the cut (NICs 8x faster than torus links so that they
  // do not limit it)
  ClusterSpec t2 = simple_cluster(64, torus({8, 8}), 800);
  t2.fabric.link.bandwidth_Bps = 100 * gbps;
  CHECK(Topology(t2).bisection_Bps() == Approx(2 * 8 * 100 * gbps));
  ClusterSpec t3 = simple_cluster(64, torus({4, 4, 4}), 800);
  t3.fabric.link.bandwidth_Bps = 100 * gbps;
  CHECK(Topology(t3).bisection_Bps() == Approx(2 * 16 * 100 * gbps));
}

TEST_CASE("torus routes have Manhattan hop counts with wrap-around, fat-tree routes go up and down") {
  const Topology t(simple_cluster(48, torus({4, 3, 4})));
  const int dims[3] = {4, 3, 4};
  for (int a = 0; a < 48; a += 5) {
    for (int b = 0; b < 48; b += 3) {
      if (a == b) continue;
      int manhattan = 0;
      int stride = 1;
      for (int d : dims) {
        const int delta = std::abs((a / stride) % d - (b / stride) % d);
        manhattan += std::min(delta, d - delta);
        stride *= d;
      }
      CAPTURE(a, b);
      // accelerator, PCIe switch, NIC, then switch to switch, then NIC, PCIe switch, accelerator
      CHECK(static_cast<int>(t.route(a, b).size()) == 6 + manhattan);
    }
  }
  CHECK(t.diameter_hops() == 6 + 2 + 1 + 2);
  // radix 4, 3 levels: same leaf (2 endpoints) 2 switch hops, same pod 4, across pods 6 (plus the 6 endpoint links)
  const Topology f(simple_cluster(16, fat_tree(4, 3, 1)));
  CHECK(f.route(0, 1).size() == 6 + 0);
  CHECK(f.route(0, 2).size() == 6 + 2);
  CHECK(f.route(0, 15).size() == 6 + 4);
  CHECK(f.diameter_hops() == 10);
  // the CLI's progress line: called before each block of searches, with the accelerators searched so far
  std::vector<int> reported;
  CHECK(f.diameter_hops([&reported](int searched) { reported.push_back(searched); }) == 10);
  CHECK(reported == std::vector<int>{0});  // (16 accelerators: one block)
  // a dragonfly: local, global, local at most
  FabricSpec fly;
  fly.kind = FabricKind::dragonfly;
  fly.groups = 5;
  fly.routers_per_group = 2;
  fly.global_links_per_router = 2;
  fly.endpoints_per_switch = 2;
  const Topology d(simple_cluster(20, fly));
  CHECK(d.diameter_hops() <= 6 + 3);
  int global = 0;
  for (const TopologyLink& l : d.links())
    global += l.link_class == LinkClass::global ? 1 : 0;
  CHECK(global == 5 * 4 / 2);  // one per pair of groups
}

TEST_CASE("fat-tree routes computed from the structure equal the graph search's, D-mod-k choices included") {
  struct Case {
    std::string file;
    int nodes;
    int radix;
    int levels;
    double oversubscription;
    bool rails = false;
  };
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/";
  for (const Case& c : std::vector<Case>{{"v100-nvlink-edr.json", 40, 6, 0, 1},  // 3 levels, 1 NIC per 4 GPUs
                                         {"dgx-h100.json", 20, 8, 4, 1},         // 4 levels, a NIC per GPU
                                         {"dgx-a100.json", 9, 8, 3, 1},
                                         {"dgx-a100.json", 9, 8, 3, 1, true},  // rail-optimised
                                         {"cpu-10gbe.json", 30, 8, 2, 3},      // oversubscribed 3:1
                                         {"pcie4-100g.json", 10, 36, 0, 1}}) {
    ClusterSpec spec = load_cluster_file(dir + c.file);
    spec.nodes = c.nodes;
    spec.fabric.kind = FabricKind::fat_tree;
    spec.fabric.radix = c.radix;
    spec.fabric.levels = c.levels;
    spec.fabric.oversubscription = c.oversubscription;
    spec.fabric.rails = c.rails;
    const Topology t(spec);
    const int n = t.accelerators();
    int compared = 0;
    for (int a = 0; a < n; a += 3) {
      for (int b = 1; b < n; b += 2) {
        if (a == b) continue;
        // rails: between rails the search finds the NVSwitch detour to the destination's rail (NCCL's PXN), which the
        // fat-tree's routes (each GPU's own NIC) do not take; on one rail both go the same way
        if (c.rails && t.port_of(a) % spec.node.nics != t.port_of(b) % spec.node.nics) continue;
        const std::vector<RouteHop> structural = t.route(a, b);
        ++compared;
        const std::vector<RouteHop> searched = t.route_by_search(a, b);
        CAPTURE(c.file, a, b);
        REQUIRE(structural.size() == searched.size());
        if (c.rails) continue;  // (as short, but the search may cross the NVSwitch where the fabric's route does not)
        for (std::size_t h = 0; h < searched.size(); ++h) {
          CHECK(structural[h].link == searched[h].link);
          CHECK(structural[h].a_to_b == searched[h].a_to_b);
        }
      }
    }
    CHECK(compared > (c.rails ? 20 : 100));
  }
}

TEST_CASE("routes inside a node from its structure equal the graph search's: NVSwitch, PCIe switch, mesh") {
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/";
  struct Case {
    std::string file;
    double pcie_Bps = 0;  // > 0: the PCIe links this wide (wider than the NVSwitch's: the shared PCIe switch wins)
  };
  for (const Case& c : std::vector<Case>{{"dgx-a100.json"},
                                         {"v100-nvlink-edr.json"},
                                         {"pcie4-100g.json"},
                                         {"../../validation/published/clusters/amd-mi300x.json"},
                                         {"dgx-h100.json", 2e12}}) {
    ClusterSpec spec = load_cluster_file(dir + c.file);
    spec.nodes = 3;
    if (c.pcie_Bps > 0) {
      spec.node.pcie.bandwidth_Bps = c.pcie_Bps;
      spec.node.nics = 2;  // four GPUs on each PCIe switch
    }
    const Topology t(spec);
    const int g = spec.node.accelerators;
    int compared = 0;
    for (int node = 0; node < spec.nodes; ++node) {
      for (int a = node * g; a < (node + 1) * g; ++a) {
        for (int b = node * g; b < (node + 1) * g; ++b) {
          const std::vector<RouteHop> structural = t.route(a, b);
          const std::vector<RouteHop> searched = t.route_by_search(a, b);
          CAPTURE(c.file, a, b);
          REQUIRE(structural.size() == searched.size());
          for (std::size_t h = 0; h < searched.size(); ++h) {
            CHECK(structural[h].link == searched[h].link);
            CHECK(structural[h].a_to_b == searched[h].a_to_b);
          }
          ++compared;
        }
      }
    }
    CHECK(compared == spec.nodes * g * g);
    if (c.pcie_Bps > 0) {  // through the shared PCIe switch, not the NVSwitch
      CHECK(t.links()[static_cast<std::size_t>(t.route(0, 1).front().link)].link_class == LinkClass::pcie);
      CHECK(t.links()[static_cast<std::size_t>(t.route(0, 4).front().link)].link_class == LinkClass::intra);
    }
  }
}

TEST_CASE("a rail-optimised fat-tree puts NIC i of every node on rail i's leaves") {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-a100.json");
  spec.nodes = 20;
  spec.fabric.radix = 40;  // leaves of 20 ports: rail i of all 20 nodes on one leaf
  const Topology plain(spec);
  spec.fabric.rails = true;
  const Topology rails(spec);
  // GPU 3 of node 0 to GPU 3 of node 19: the same rail, one leaf (NIC, leaf, NIC: 6 hops in all)
  CHECK(rails.route(3, 19 * 8 + 3).size() == 6);
  CHECK(plain.route(3, 19 * 8 + 3).size() == 8);  // node 19's NICs are on the eighth leaf: up to a spine and down
  // GPU 3 to GPU 4 of another node: two rails, two leaves
  CHECK(rails.route(3, 8 + 4).size() == 8);
  // so the library's rings (channel c on NIC c of every node) stay on their rail's leaf
  CHECK(rails.fabric_place(8 + 3) == 3 * 20 + 1);
  CHECK(plain.fabric_place(8 + 3) == 8 + 3);
  // 120 nodes need a third level: each rail is then a pod of its own (6 leaves and their spines), so GPU 3 of node 0
  // and GPU 3 of node 100 (same rail, leaves 0 and 5) meet at a spine of their pod, never at the top (8 hops), and
  // a rail's ports start at a pod's first: rail 1 at 400 (pods of 20 leaves of 20 ports), not at 120 (packed)
  spec.nodes = 120;
  const Topology three(spec);
  CHECK(three.route(3, 100 * 8 + 3).size() == 8);
  CHECK(three.fabric_place(1) == 400);
  CHECK(three.fabric_place(8 + 1) == 401);
  // where pods would not fit the levels the rails need packed (8 rails on radix 36: 3 levels hold 1458 nodes packed,
  // 1296 in pods), the rails stay packed: 1297 nodes keep three levels (routes of at most 10 links), not four
  ClusterSpec dgx2 = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx2-v100.json");
  dgx2.fabric.rails = true;
  dgx2.nodes = 1297;
  const Topology packed(dgx2);
  CHECK(packed.route(0, packed.accelerators() - 1).size() == 10);
  CHECK(packed.fabric_place(2) ==
        1314);  // GPU 2 on NIC 1: rail 1 right after rail 0's 73 leaves of 18 ports (pods: 1620)
  // the loader reads it, for fat-trees only
  const std::string file = "/tmp/dtsim-rails-test.json";
  {
    std::ofstream out(file);
    out << R"({"cluster": {"name": "r", "nodes": 2, "node": {"accelerators": 2, "reduce_rate": "10GBps",
      "intra": {"kind": "nvswitch", "bandwidth": "100GBps", "latency": "1us"},
      "pcie": {"bandwidth": "20GBps", "latency": "1us"}, "nics": {"count": 2, "bandwidth": "100Gbps", "latency": "1us"}},
      "fabric": {"kind": "fat-tree", "radix": 8, "rails": true}}})";
  }
  CHECK(load_cluster_file(file).fabric.rails);
  std::filesystem::remove(file);
}

TEST_CASE(
    "D-mod-k takes one digit of the destination a level: no up-link of a 3-level fat-tree carries two ring hops") {
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/dgx-a100.json");
  spec.nodes = 128;  // 1024 NIC ports, radix 40: 3 levels
  for (const bool rails : {false, true}) {
    spec.fabric.rails = rails;
    const Topology t(spec);
    std::map<std::pair<int, bool>, int> flows;  // by link and direction: the ring's hops between nodes crossing it
    int hops = 0;
    for (int a = 0; a < t.accelerators(); ++a) {
      const int b = (a + 1) % t.accelerators();
      if (t.node_of(a) == t.node_of(b)) continue;
      for (const RouteHop& h : t.route(a, b))
        ++flows[{h.link, h.a_to_b}];
      ++hops;
    }
    CAPTURE(rails);
    CHECK(hops == 128);
    int most = 0;
    for (const auto& [link, count] : flows)
      most = std::max(most, count);
    CHECK(most == 1);  // (the same lowest digit at every level put 7 of them on one up-link with rails)
  }
}

TEST_CASE("clusters too large for their fabric are refused naming the fabric") {
  CHECK_THROWS_WITH(Topology(simple_cluster(100, fat_tree(8, 2, 1))),
                    Catch::StartsWith("cluster.fabric: 100 NIC ports do not fit a 2-level fat-tree of radix 8 (at "
                                      "most 32)"));
  CHECK_THROWS_WITH(Topology(simple_cluster(17, torus({4, 4}))),
                    Catch::StartsWith("cluster.fabric.dimensions: 17 NIC ports do not fit 16 switches"));
  // a fabric far larger than its ports is refused before it is built, with its size: a 4-level fat-tree of radix 1024
  // (1.3e8 switches) or a torus of 2048 x 2048 switches for 4 ports; one in proportion to its ports is not
  CHECK_THROWS_WITH(Topology(simple_cluster(4, fat_tree(1024, 4, 1))),
                    Catch::StartsWith("cluster.fabric: a 4-level fat-tree of radix 1024 has 1.35e+08 switches and "
                                      "4.03e+08 links (about 209 GB); for 4 NIC ports at most 1.05e+06 switches"));
  CHECK_THROWS_WITH(Topology(simple_cluster(4, torus({2048, 2048}))), Catch::Contains("lower dimensions"));
  FabricSpec fly;
  fly.kind = FabricKind::dragonfly;
  fly.groups = 64;
  fly.routers_per_group = 1024;
  fly.global_links_per_router = 1;
  CHECK_THROWS_WITH(Topology(simple_cluster(4, fly)), Catch::Contains("lower groups or routers_per_group"));
  CHECK(Topology(simple_cluster(4, torus({1024, 64}))).fabric_switches() == 65536);
  // auto levels pick the fewest that fit
  FabricSpec autotree = fat_tree(8, 0, 1);
  CHECK(Topology(simple_cluster(8, autotree)).fabric_switches() == 1);
  CHECK(Topology(simple_cluster(32, autotree)).fabric_switches() == 8 + 4);
}

TEST_CASE("a 4:1 oversubscribed fat-tree slows a cross-leaf ring allreduce by the factor its uplinks imply") {
  // radix 8, 2 levels: leaves of 4 endpoints with 4 uplinks (non-blocking) or 1 (4:1); 8 nodes on 2 leaves.
  // Positions alternate between the leaves, so every ring hop leaves its leaf: 4 flows share each leaf's uplinks.
  std::vector<int> interleaved;
  for (int p = 0; p < 8; ++p)
    interleaved.push_back((p % 2) * 4 + p / 2);
  auto time = [&](double oversubscription) {
    const Topology topology(simple_cluster(8, fat_tree(8, 2, oversubscription)));
    SimGridOptions sg;
    sg.topology = &topology;
    sg.accelerator_of = interleaved;
    return run_simgrid(find_algorithm("ring").build(8, 400000000, AlgorithmOptions{}), sg).time_s;
  };
  const double blocking = time(4);
  const double full = time(1);
  CHECK(blocking / full == Approx(4.0).epsilon(0.02));
  // in topology order the ring crosses each leaf boundary once and oversubscription costs (almost) nothing
  const Topology topology(simple_cluster(8, fat_tree(8, 2, 4)));
  SimGridOptions sg;
  sg.topology = &topology;
  sg.accelerator_of = place_positions(topology, Placement::round_robin, RankOrder::topology);
  CHECK(run_simgrid(find_algorithm("ring").build(8, 400000000, AlgorithmOptions{}), sg).time_s / full < 1.01);
}

TEST_CASE("hierarchical allreduce beats the flat ring on 8-GPU NVSwitch nodes with a single NIC") {
  ClusterSpec c = simple_cluster(2, fat_tree(8, 0, 1));
  c.node.accelerators = 8;
  c.node.intra_kind = IntraKind::nvswitch;
  c.node.intra = LinkSpec{300e9, 0.7e-6};
  c.node.pcie = LinkSpec{25e9, 0.3e-6};
  c.node.nic = LinkSpec{25e9, 0.6e-6};
  for (int nodes : {2, 4}) {
    CAPTURE(nodes);
    c.nodes = nodes;
    const Topology topology(c);
    SimGridOptions sg;
    sg.topology = &topology;
    sg.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
    const int p = topology.accelerators();
    AlgorithmOptions options;
    options.set("ranks-per-node", 8);
    const double ring = run_simgrid(find_algorithm("ring").build(p, 256000000, options), sg).time_s;
    const double hierarchical = run_simgrid(find_algorithm("hierarchical").build(p, 256000000, options), sg).time_s;
    // the flat ring pushes 2 (P-1)/P n through each NIC, the hierarchical one 2 (N-1)/N n after a node-local
    // reduce-scatter and before a node-local allgather, (G-1) steps of n/G each over NVSwitch
    const double n = 256e6;
    const double flat = 2.0 * (p - 1) / p * n / 25e9;
    const double two_level = 2.0 * (nodes - 1) / nodes * n / 25e9 + 2.0 * 7 * (n / 8) / 300e9;
    CHECK(ring / hierarchical == Approx(flat / two_level).epsilon(0.03));
    CHECK(hierarchical < ring);
  }
}

TEST_CASE("placement: block fills nodes, round-robin deals ranks to nodes, topology order ignores the numbering") {
  ClusterSpec c = simple_cluster(3, fat_tree(8, 0, 1));
  c.node.accelerators = 2;
  c.node.intra_kind = IntraKind::nvswitch;
  c.node.intra = LinkSpec{300e9, 0.7e-6};
  const Topology t(c);
  CHECK(place_positions(t, Placement::block, RankOrder::rank) == std::vector<int>{0, 1, 2, 3, 4, 5});
  CHECK(place_positions(t, Placement::round_robin, RankOrder::rank) == std::vector<int>{0, 2, 4, 1, 3, 5});
  CHECK(place_positions(t, Placement::round_robin, RankOrder::topology) == std::vector<int>{0, 1, 2, 3, 4, 5});
  // NVSwitch inside a node: two links; across nodes through PCIe, NIC and switch: six
  CHECK(t.route(0, 1).size() == 2);
  CHECK(t.route(0, 2).size() == 6);
}

TEST_CASE("the SimGrid platform file lists every host, link and ordered pair's route") {
  ClusterSpec c = simple_cluster(4, torus({2, 2}));
  const Topology t(c);
  std::ostringstream xml;
  write_platform_xml(t, xml);
  const std::string text = xml.str();
  auto count = [&](const std::string& what) {
    int n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
      ++n;
    return n;
  };
  CHECK(count("<host ") == 4);
  CHECK(count("<link ") == static_cast<int>(t.links().size()));
  CHECK(count("<route ") == 4 * 3);
  CHECK(count("<link_ctn ") == [&] {
    int hops = 0;
    for (int a = 0; a < 4; ++a) {
      for (int b = 0; b < 4; ++b)
        hops += a == b ? 0 : static_cast<int>(t.route(a, b).size());
    }
    return hops;
  }());
  CHECK_THAT(text, Catch::Contains("sharing_policy=\"SPLITDUPLEX\""));
}

TEST_CASE("SimGrid itself loads the platform file, with the routes dtsim simulates") {
  const Topology t(simple_cluster(4, torus({2, 2})));
  const std::string path =
      (std::filesystem::temp_directory_path() / ("dtsim-platform-" + std::to_string(::getpid()) + ".xml")).string();
  {
    std::ofstream out(path);
    write_platform_xml(t, out);
  }
  // SimGrid allows one engine per process: load the file in a child and report through the exit code
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    int code = 1;
    try {
      int argc = 1;
      char name[] = "platform-check";
      char* argv[] = {name, nullptr};
      simgrid::s4u::Engine engine(&argc, argv);
      engine.load_platform(path);
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0;
      engine.host_by_name("a0")->route_to(engine.host_by_name("a3"), links, &latency);
      const bool hosts_ok = engine.get_host_count() == 4;
      const bool route_ok = links.size() == t.route(0, 3).size();
      code = hosts_ok && route_ok ? 0 : 3;
    } catch (...) {
      code = 4;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  std::filesystem::remove(path);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("D-mod-k goes by the destination's NIC port: routes into the first GPUs of many nodes use every uplink") {
  // 4 V100s behind one NIC; radix 8: 4 nodes a leaf, 4 uplinks. Numbered by accelerator (0, 4, 8, ...), every route
  // into a node's first GPU would leave the leaf by uplink 0 (4k mod 4); numbered by port (0, 1, 2, ...), by all four.
  ClusterSpec spec = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/v100-nvlink-edr.json");
  spec.nodes = 16;
  spec.fabric.kind = FabricKind::fat_tree;
  spec.fabric.radix = 8;
  spec.fabric.levels = 0;
  const Topology t(spec);
  std::set<int> first_uplinks;
  for (int node = 4; node < 16; ++node) {  // from GPU 1 of node 0 to GPU 0 of every node on another leaf
    const std::vector<RouteHop> hops = t.route(1, node * 4);
    REQUIRE(hops.size() > 4);
    CHECK(t.links()[static_cast<std::size_t>(hops[3].link)].link_class == LinkClass::fabric);
    first_uplinks.insert(hops[3].link);                            // after the PCIe hops and the NIC's link to its leaf
    const std::vector<RouteHop> other = t.route(1, node * 4 + 2);  // another GPU behind the same NIC
    REQUIRE(other.size() == hops.size());
    for (std::size_t h = 0; h + 1 < hops.size(); ++h)  // the same way up to the last link, into the GPU
      CHECK((other[h].link == hops[h].link && other[h].a_to_b == hops[h].a_to_b));
  }
  CHECK(first_uplinks.size() == 4);
}
