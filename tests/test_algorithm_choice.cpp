// `--algorithm auto` (sim/algorithm_choice.hpp): the library's own choice of algorithm and protocol per call.
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <utility>

#include "algorithms/registry.hpp"
#include "cluster_helpers.hpp"
#include "models/collective_library.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/algorithm_choice.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

struct Cluster {
  ClusterSpec spec;
  Topology topology;
  NetworkCost network;
  Cluster(int nodes, bool library, const char* protocols = "")
      : Cluster([&] {
          ClusterSpec s = test::a100_nodes(nodes, library);
          if (std::string(protocols) == "simple") s.library.allow_ll = s.library.allow_ll128 = false;
          return s;
        }()) {}
  explicit Cluster(ClusterSpec s) : spec(std::move(s)), topology(spec) {
    network.topology = &topology;
    network.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
    network.library = spec.library;
  }
  AlgorithmChoice choose(std::uint64_t bytes) const {
    return choose_algorithm(Collective::allreduce, topology.accelerators(), bytes, AlgorithmOptions(4), network);
  }
};

}  // namespace

TEST_CASE("without a library, auto follows MPICH: recursive doubling up to 2 KiB, Rabenseifner above") {
  const NetworkCost star;
  const AlgorithmOptions floats(4);
  CHECK(choose_algorithm(Collective::allreduce, 8, 1000, floats, star).algorithm->name == "butterfly");
  CHECK(choose_algorithm(Collective::allreduce, 8, 2048, floats, star).algorithm->name == "butterfly");
  CHECK(choose_algorithm(Collective::allreduce, 8, 2052, floats, star).algorithm->name == "rabenseifner");
  CHECK(choose_algorithm(Collective::allreduce, 8, 100'000'000, floats, star).algorithm->name == "rabenseifner");
  // fewer elements than the largest power of two of ranks: recursive doubling whatever the size
  CHECK(choose_algorithm(Collective::allreduce, 4096, 4 * 3000, floats, star).algorithm->name == "butterfly");
  const AlgorithmChoice rule = choose_algorithm(Collective::allreduce, 8, 1 << 20, floats, star);
  CHECK(rule.rule == "mpich thresholds");
  CHECK(rule.protocol == Protocol::none);
  CHECK(rule.candidates.empty());
  // a cluster without a library is MPI's too
  const Cluster plain(4, false);
  CHECK(plain.choose(1 << 20).algorithm->name == "rabenseifner");
}

TEST_CASE("a collective with one algorithm gets it, whatever the network") {
  const Cluster nccl(4, true);
  for (const Collective c :
       {Collective::broadcast, Collective::reduce, Collective::gather, Collective::scatter, Collective::alltoall}) {
    const AlgorithmChoice choice = choose_algorithm(c, 32, 1 << 20, AlgorithmOptions(4), nccl.network);
    REQUIRE(choice.algorithm != nullptr);
    CHECK(choice.algorithm->collective == c);
    CHECK(choice.rule == "only algorithm");
  }
}

TEST_CASE(
    "reduce-scatter and allgather: MPICH's log2 P algorithm below its thresholds, the ring above, NCCL's ring on its "
    "clusters") {
  const NetworkCost star;
  const AlgorithmOptions floats(4);
  auto name = [&](Collective c, int ranks, std::uint64_t bytes) {
    return std::string(choose_algorithm(c, ranks, bytes, floats, star).algorithm->name);
  };
  for (const Collective c : {Collective::reduce_scatter, Collective::allgather}) {
    CAPTURE(to_string(c));
    CHECK(name(c, 8, 8 << 10) == "bruck");
    CHECK(name(c, 8, 512 * 1024 - 4) == "bruck");  // powers of two: below 512 KiB
    CHECK(name(c, 8, 512 * 1024) == "ring");
    CHECK(name(c, 8, 100'000'000) == "ring");
    CHECK(choose_algorithm(c, 8, 1024, floats, star).rule == "mpich thresholds");
  }
  // allgather off powers of two: Bruck below 80 KiB only; reduce-scatter keeps 512 KiB
  CHECK(name(Collective::allgather, 6, 80 * 1024 - 4) == "bruck");
  CHECK(name(Collective::allgather, 6, 80 * 1024) == "ring");
  CHECK(name(Collective::reduce_scatter, 6, 400 * 1024) == "bruck");
  // a library's cluster of several GPUs a node: NCCL's ring (PAT is for one GPU a node)
  const Cluster nccl(4, true);
  for (const Collective c : {Collective::reduce_scatter, Collective::allgather}) {
    const AlgorithmChoice choice = choose_algorithm(c, 32, 8 << 10, floats, nccl.network);
    CHECK(choice.algorithm->name == "ring");
    CHECK(choice.rule == "nccl tuner");
    CHECK(choice.candidates.size() == 1);
  }
}

TEST_CASE("Bruck's log2 P steps win small reduce-scatters and allgathers across nodes, the ring wins large ones") {
  const Cluster plain(16, false);
  FlowOptions fo(plain.network);
  for (const Collective c : {Collective::reduce_scatter, Collective::allgather}) {
    CAPTURE(to_string(c));
    auto time = [&](const char* algorithm, std::uint64_t bytes) {
      return run_flow(find_algorithm(algorithm, c).build(128, bytes, AlgorithmOptions(4)), fo).time_s;
    };
    // 8 KB: 7 steps against the ring's 127 latencies
    CHECK(time("bruck", 8000) * 5 < time("ring", 8000));
    // 256 MB: Bruck's last step sends half the buffer across nodes at once, the ring keeps most of it on NVLink
    CHECK(time("ring", 256'000'000) * 1.5 < time("bruck", 256'000'000));
  }
}

TEST_CASE("NCCL's tuner: the tree for small calls across many nodes, the ring for large ones and inside a node") {
  const Cluster sixteen(16, true);
  const AlgorithmChoice small = sixteen.choose(8 << 10);
  CHECK(small.rule == "nccl tuner");
  CHECK(small.algorithm->name == "dbtree");  // (the options lay no ranks in nodes: dbtree over every rank)
  REQUIRE(small.candidates.size() == 2);
  CHECK(small.candidates[0].algorithm->name == "ring");
  CHECK(small.candidates[1].algorithm->name == "dbtree");
  AlgorithmOptions nodes_of_8(4);
  nodes_of_8.set("ranks-per-node", std::uint64_t{8});
  CHECK(choose_algorithm(Collective::allreduce, 128, 8 << 10, nodes_of_8, sixteen.network).algorithm->name ==
        "chain-dbtree");
  // the tree's log2(nodes) network hops against the ring's 2(nodes - 1): far fewer latencies
  CHECK(small.candidates[1].estimate_s < 0.5 * small.candidates[0].estimate_s);
  CHECK(small.protocol == Protocol::ll);
  const AlgorithmChoice large = sixteen.choose(1ULL << 30);
  CHECK(large.algorithm->name == "ring");
  CHECK(large.protocol == Protocol::simple);
  // the choice is the smaller estimate
  for (const AlgorithmChoice& c : {small, large}) {
    const auto& chosen = c.candidates[c.algorithm == c.candidates[0].algorithm ? 0 : 1];
    const auto& rejected = c.candidates[c.algorithm == c.candidates[0].algorithm ? 1 : 0];
    CHECK(chosen.estimate_s <= rejected.estimate_s);
    CHECK(chosen.protocol == c.protocol);
  }
  // one node: a chain is no shorter than the ring and has less bandwidth
  const Cluster one(1, true);
  CHECK(one.choose(8 << 10).algorithm->name == "ring");
  CHECK(one.choose(1ULL << 30).algorithm->name == "ring");
  // the protocols the cluster allows bound the choice
  const Cluster simple_only(16, true, "simple");
  CHECK(simple_only.choose(8 << 10).protocol == Protocol::simple);
}

TEST_CASE("library.allreduce_algorithms (NCCL_ALGO) bounds the tuner's allreduce choice and is named in its rule") {
  const Cluster all(16, true);
  REQUIRE(all.choose(8 << 10).algorithm->name == "dbtree");
  REQUIRE(all.choose(1ULL << 30).algorithm->name == "ring");
  CHECK(all.network.library.allreduce_restriction().empty());
  ClusterSpec tree_spec = test::a100_nodes(16, true);
  tree_spec.library.allreduce_algorithms = 1U << static_cast<unsigned>(LibraryAlgorithm::tree);
  const Cluster tree_only(tree_spec);
  for (const std::uint64_t bytes : {std::uint64_t{8} << 10, std::uint64_t{1} << 30}) {
    const AlgorithmChoice c = tree_only.choose(bytes);
    CHECK(c.algorithm->name == "dbtree");
    CHECK(c.rule == "nccl tuner over tree");
    REQUIRE(c.candidates.size() == 1);
  }
  ClusterSpec ring_spec = test::a100_nodes(16, true);
  ring_spec.library.allreduce_algorithms = 1U << static_cast<unsigned>(LibraryAlgorithm::ring);
  const Cluster ring_only(ring_spec);
  const AlgorithmChoice small = ring_only.choose(8 << 10);
  CHECK(small.algorithm->name == "ring");
  CHECK(small.rule == "nccl tuner over ring");
  // a one-rank call has no tree: the ring runs it even where only the tree is listed
  ClusterSpec one_spec = test::a100_nodes(1, true);
  one_spec.library.allreduce_algorithms = tree_spec.library.allreduce_algorithms;
  const Cluster one(one_spec);
  CHECK(choose_algorithm(Collective::allreduce, 1, 1 << 20, AlgorithmOptions(4), one.network).algorithm->name ==
        "ring");
}

TEST_CASE("NCCL's tree estimate: latency terms alone for an empty call, bandwidth at the tree's share beyond") {
  CollectiveLibrary nccl;
  nccl.name = "nccl";
  nccl.generation = GpuGeneration::ampere;
  nccl.launch_s = 5e-6;
  TreeCall call;
  call.nodes = 16;
  call.per_node = 8;
  call.channels = 8;
  call.bus_Bps = 8 * 25e9;
  // Simple, tree: base 8.4 us, NVLink hop 4.0 us, network hop 14 us: 2 (7 x 4.0 + 4 x 14) = 168 us
  CHECK(estimate_tree_allreduce_seconds(nccl, Protocol::simple, call) == Approx(5e-6 + 8.4e-6 + 168e-6));
  // LL: base 6.8 us, hops 0.6 and 5.0: 2 (7 x 0.6 + 4 x 5.0) = 48.4 us
  CHECK(estimate_tree_allreduce_seconds(nccl, Protocol::ll, call) == Approx(5e-6 + 6.8e-6 + 48.4e-6));
  // 1 GiB in Simple: min(200 GB/s x 0.96 x 0.92, 8 x 17.8 GB/s) = 142.4 GB/s (NCCL corrects no size above 256 MiB)
  call.bytes = 1 << 30;
  const double latency_s = 5e-6 + 8.4e-6 + 168e-6;
  CHECK(estimate_tree_allreduce_seconds(nccl, Protocol::simple, call) ==
        Approx(latency_s + 2.0 * (1 << 30) / (8 * 17.8e9)).epsilon(1e-6));
  // 256 MiB: NCCL's correction for Simple trees of that size, 0.9
  call.bytes = 1 << 28;
  CHECK(estimate_tree_allreduce_seconds(nccl, Protocol::simple, call) ==
        Approx(latency_s + 2.0 * (1 << 28) / (8 * 17.8e9 * 0.9)).epsilon(1e-6));
  // LL: 1/3.8 of the tree's Simple share, at most llMaxBw (Ampere, more than 2 nodes: 19 GB/s)
  call.bytes = 1 << 20;  // log2(2^20 / 64) = 14: LL's correction 0.5
  CHECK(estimate_tree_allreduce_seconds(nccl, Protocol::ll, call) ==
        Approx(5e-6 + 6.8e-6 + 48.4e-6 + 2.0 * (1 << 20) / (std::min(8 * 17.8e9 / 3.8, 19e9) * 0.5)).epsilon(1e-6));
}

TEST_CASE("at one GPU a node NCCL's tuner weighs PAT for reduce-scatter and allgather, run as bruck in Simple") {
  ClusterSpec spec = test::a100_nodes(16);
  spec.node.accelerators = 1;  // one GPU and one NIC a node
  spec.node.nics = 1;
  spec.node.intra_kind = IntraKind::pcie;
  const Topology topology(spec);
  NetworkCost network;
  network.topology = &topology;
  network.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
  network.library = spec.library;
  const AlgorithmOptions floats(4);
  for (const Collective c : {Collective::reduce_scatter, Collective::allgather}) {
    const AlgorithmChoice choice = choose_algorithm(c, 16, 1 << 20, floats, network);
    REQUIRE(choice.candidates.size() == 2);
    CHECK(choice.candidates[1].algorithm->name == "bruck");
    CHECK(choice.candidates[1].protocol == Protocol::simple);
    CHECK(choice.rule == "nccl tuner");
  }
  // its latency: 8 us, 2.8 us a rank and 14/3.5 us a doubling step (tuning.cc); its bandwidth x 0.75
  PatCall call;
  call.ranks = 16;
  call.nic_Bps = 25e9;
  CHECK(estimate_pat_seconds(spec.library, call) ==
        Approx(spec.library.launch_s + (8 + 2.8 * 16 + 4 * 4.0) * 1e-6).epsilon(1e-9));
  call.bytes = 1e9;
  CHECK(estimate_pat_seconds(spec.library, call) ==
        Approx(spec.library.launch_s + (8 + 2.8 * 16 + 4 * 4.0) * 1e-6 + 1e9 / (25e9 * 12.0 / 12.5 * 0.75))
            .epsilon(1e-9));
  // the library runs bruck as PAT: in Simple, refusing another protocol
  const Collective ag = Collective::allgather;
  const LibraryCallPlan plan =
      plan_library_call(find_algorithm("bruck", ag), 16, floats, 1 << 20, network, true, Protocol::none);
  CHECK(plan.schedule.protocol == Protocol::simple);
  CHECK_THROWS_AS(plan_library_call(find_algorithm("bruck", ag), 16, floats, 1 << 20, network, false, Protocol::ll),
                  OptionError);
}

TEST_CASE("RCCL's MSCCL files take an 8-GPU mesh node's allreduce up to 16 MiB: all-pairs, LL then Simple") {
  ClusterSpec spec =
      load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/validation/published/clusters/amd-mi300x.json");
  REQUIRE(spec.library.msccl);
  const auto choose = [](const ClusterSpec& s, std::uint64_t bytes) { return Cluster(s).choose(bytes); };
  const AlgorithmChoice small = choose(spec, 32 << 10);
  CHECK(small.algorithm->name == "direct");
  CHECK(small.protocol == Protocol::ll);
  CHECK(small.candidates.empty());
  CHECK_THAT(small.rule, Catch::StartsWith("rccl msccl"));
  CHECK(choose(spec, (512 << 10) - 4).protocol == Protocol::ll);
  const AlgorithmChoice mid = choose(spec, 512 << 10);
  CHECK(mid.algorithm->name == "direct");
  CHECK(mid.protocol == Protocol::simple);
  CHECK(choose(spec, 16 << 20).algorithm->name == "direct");
  // above the files' sizes, and with MSCCL off, RCCL's tuner weighs its own algorithms
  const AlgorithmChoice large = choose(spec, (16 << 20) + 4);
  CHECK(large.algorithm->name != "direct");
  CHECK_FALSE(large.candidates.empty());
  ClusterSpec off = spec;
  off.library.msccl = false;
  CHECK(choose(off, 32 << 10).algorithm->name == "ring");
  // the files are for 8 GPUs of one node: two nodes take the tuner's choice
  ClusterSpec two = spec;
  two.nodes = 2;
  CHECK(choose(two, 32 << 10).algorithm->name != "direct");
  // without LL (NCCL_PROTO), the small sizes' file cannot run
  ClusterSpec no_ll = spec;
  no_ll.library.allow_ll = false;
  CHECK(choose(no_ll, 32 << 10).algorithm->name != "direct");
  // and the call is faster than the ring the tuner would run there: 2 steps of latency instead of 14
  const Cluster mesh(spec);
  FlowOptions flow(mesh.network);
  const auto time_of = [&](const char* name, Protocol protocol) {
    Schedule s = find_algorithm(name).build(8, 32 << 10, AlgorithmOptions(4));
    s.protocol = protocol;
    return run_flow(s, flow).time_s;
  };
  CHECK(time_of("direct", Protocol::ll) < 0.7 * time_of("ring", Protocol::ll));
}

TEST_CASE("a library's own intra-link rate (library.link_rate) sets the share of the line rate its calls reach") {
  // RCCL counts 48 GB/s per xGMI link on MI300X where NCCL's Hopper figure would give 20.6 / 25 of the 64 GB/s line
  const ClusterSpec spec =
      load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/validation/published/clusters/amd-mi300x.json");
  REQUIRE(spec.library.intra_share == Approx(48.0 / 64.0));
  ClusterSpec nccl_share = spec;
  nccl_share.library.intra_share = 0;
  const auto ring_time = [](const ClusterSpec& s) {
    const Cluster mesh(s);
    const LibraryCallPlan plan = plan_library_call(find_algorithm("ring"), 8, AlgorithmOptions(4), 1ULL << 30,
                                                   mesh.network, false, Protocol::simple);
    FlowOptions flow(mesh.network);
    flow.accelerator_of = plan.accelerator_of;
    return run_flow(plan.schedule, flow).time_s;
  };
  // a large call is bandwidth-bound: its time grows by the ratio of the shares
  CHECK(ring_time(spec) / ring_time(nccl_share) == Approx((20.6 / 25.0) / (48.0 / 64.0)).epsilon(0.01));
}
