// The collective-library layer (models/collective_library.hpp, sim/library_cost.hpp): NCCL's protocols, eager
// messages with a per-hop latency, fused reductions and one ring per NIC, charged alike by every executor.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "algorithms/verifier.hpp"
#include "cluster_helpers.hpp"
#include "rel_diff.hpp"
#include "scenarios/cluster_file.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

using test::a100_nodes;

struct Run {
  Topology topology;
  NetworkCost network;
  explicit Run(const ClusterSpec& spec) : topology(spec) {
    network.topology = &topology;
    network.accelerator_of = place_positions(topology, Placement::block, RankOrder::topology);
    network.library = spec.library;
  }
  Schedule ring(std::uint64_t bytes, Protocol protocol) const {
    Schedule s = find_algorithm("ring").build(topology.accelerators(), bytes, AlgorithmOptions(4));
    s.protocol = protocol;
    return s;
  }
  double flow(const Schedule& s, bool lump_always = false) const {
    FlowOptions o(network);
    o.lump_always = lump_always;
    return run_flow(s, o).time_s;
  }
  double analytical(const Schedule& s) const { return run_analytical(s, AnalyticalOptions(network)).time_s; }
  double simgrid(const Schedule& s) const { return run_simgrid(s, SimGridOptions(network)).time_s; }
};

}  // namespace

TEST_CASE("the tuner picks LL for small messages, LL128 in between and Simple for large ones") {
  const Run one_node(a100_nodes(1));
  CHECK(tuned_protocol(one_node.network, one_node.ring(8 << 10, Protocol::none)) == Protocol::ll);
  CHECK(tuned_protocol(one_node.network, one_node.ring(16 << 20, Protocol::none)) == Protocol::ll128);
  CHECK(tuned_protocol(one_node.network, one_node.ring(1ULL << 30, Protocol::none)) == Protocol::simple);
  // the choice follows the estimate: the chosen protocol's is the smallest
  for (const std::uint64_t bytes : {std::uint64_t{1} << 10, std::uint64_t{4} << 20, std::uint64_t{256} << 20}) {
    const LibraryCall call = library_call(one_node.network, one_node.ring(bytes, Protocol::none));
    const Protocol chosen = choose_protocol(one_node.network.library, call);
    for (const Protocol p : library_protocols) {
      CHECK(estimate_seconds(one_node.network.library, chosen, call) <=
            estimate_seconds(one_node.network.library, p, call));
    }
  }
  // a library that allows only Simple is given Simple; none without a library
  Run simple_only(a100_nodes(1));
  simple_only.network.library.allow_ll = simple_only.network.library.allow_ll128 = false;
  CHECK(tuned_protocol(simple_only.network, simple_only.ring(8 << 10, Protocol::none)) == Protocol::simple);
  const Run plain(a100_nodes(1, false));
  CHECK(tuned_protocol(plain.network, plain.ring(8 << 10, Protocol::none)) == Protocol::none);
}

TEST_CASE("LL beats Simple for small messages and loses to it for large ones") {
  const Run run(a100_nodes(1));
  CHECK(run.flow(run.ring(8 << 10, Protocol::ll)) < run.flow(run.ring(8 << 10, Protocol::simple)));
  CHECK(run.flow(run.ring(256 << 20, Protocol::ll)) > run.flow(run.ring(256 << 20, Protocol::simple)));
  // at large sizes LL's bus bandwidth is held to its cap (llMaxBw, Ampere, one node: 87.7 GB/s)
  const double ll_s = run.flow(run.ring(1ULL << 30, Protocol::ll));
  const double busbw = static_cast<double>(1ULL << 30) / ll_s * 2 * 7 / 8;
  CHECK(busbw < 87.7e9);
  CHECK(busbw > 0.9 * 87.7e9);
}

TEST_CASE("a call's latency floor: the launch and base latency, then each step's wire and hop latency") {
  const Run run(a100_nodes(1));
  const ProtocolCost ll = run.network.library.cost(Protocol::ll, LibraryAlgorithm::ring, 1);
  // a 0-byte allreduce moves no message: the launch and the base latency
  CHECK(rel_diff(run.flow(run.ring(0, Protocol::ll)), 10e-6 + ll.base_latency_s) < 1e-12);
  // 4 bytes: 2(P-1) steps, each the NVSwitch route's latency (two links of 0.7 us) and NVLink's LL hop latency
  const double expected = 10e-6 + ll.base_latency_s + 14 * (1.4e-6 + ll.hop_latency_s[0]);
  for (const double t : {run.flow(run.ring(4, Protocol::ll)), run.analytical(run.ring(4, Protocol::ll)),
                         run.simgrid(run.ring(4, Protocol::ll))}) {
    CHECK(rel_diff(t, expected) < 1e-3);
  }
}

TEST_CASE("with the protocol none, or no library, the times are the wire's alone as before") {
  const Run with(a100_nodes(2)), without(a100_nodes(2, false));
  for (const std::uint64_t bytes : {std::uint64_t{4096}, std::uint64_t{64} << 20}) {
    const Schedule s = without.ring(bytes, Protocol::none);
    CHECK(with.flow(s) == without.flow(s));
    CHECK(with.analytical(s) == without.analytical(s));
    CHECK(with.simgrid(s) == without.simgrid(s));
    // the closed form of a ring on its slowest route is below (no library terms): the library only adds
    CHECK(with.flow(with.ring(bytes, Protocol::simple)) > with.flow(s));
  }
}

TEST_CASE("the executors agree on a library's eager messages, per-hop latencies and fused reductions") {
  const Run run(a100_nodes(2));
  for (const Protocol p : {Protocol::ll, Protocol::ll128, Protocol::simple}) {
    for (const std::uint64_t bytes : {std::uint64_t{8} << 10, std::uint64_t{32} << 20}) {
      const Schedule s = run.ring(bytes, p);
      const double flow = run.flow(s);
      CAPTURE(to_string(p), bytes);
      Schedule full = expand(s);  // (classes of ranks are found for schedules written out)
      full.protocol = p;
      CHECK(rel_diff(run.flow(full, true), flow) < 1e-9);  // the lumped engine, on classes of ranks
      FlowOptions lumped(run.network);
      lumped.lump_always = true;
      CHECK(run_flow(full, lumped).rank_classes > 0);
      CHECK(rel_diff(run.analytical(s), flow) < 1e-9);
      CHECK(rel_diff(run.simgrid(s), flow) < 1e-5);  // (SimGrid's max-min solver: maxmin/precision 1e-5)
    }
  }
}

TEST_CASE("eager messages: a ring's latency adds up along its longest chain of hops, not the slowest hop each step") {
  // 2 nodes of 8: per message the route's latency, plus the hop latency at the receiver (NVLink inside a node, the
  // network between them); a rank's next step waits for its own send to land and for its receive to be seen
  const Run run(a100_nodes(2));
  const int p = 16;
  const ProtocolCost simple = run.network.library.cost(Protocol::simple, LibraryAlgorithm::ring, 2);
  std::vector<double> wire(p), hop(p);  // of the message from rank r to r + 1
  for (int r = 0; r < p; ++r) {
    double latency = 0;
    for (const RouteHop& h : run.topology.route(r, (r + 1) % p))
      latency += run.topology.links()[static_cast<std::size_t>(h.link)].spec.latency_s;
    wire[static_cast<std::size_t>(r)] = latency;
    const bool across = r / 8 != ((r + 1) % p) / 8;
    hop[static_cast<std::size_t>(r)] = simple.hop_latency_s[across ? 2 : 0];
  }
  std::vector<double> done(p, 10e-6 + simple.base_latency_s);  // when each rank finished its last step
  for (int step = 0; step < 2 * (p - 1); ++step) {
    std::vector<double> next(p);
    for (int r = 0; r < p; ++r) {
      const auto me = static_cast<std::size_t>(r), from = static_cast<std::size_t>((r + p - 1) % p);
      next[me] = std::max(done[me] + wire[me], done[from] + wire[from] + hop[from]);
    }
    done = next;
  }
  const double expected = *std::max_element(done.begin(), done.end());
  const double t = run.flow(run.ring(4, Protocol::simple));
  CHECK(rel_diff(t, expected) < 1e-3);
  // far below every step paying the network's hop (what a step-synchronous model would give)
  CHECK(t < 10e-6 + simple.base_latency_s + 30 * simple.hop_latency_s[2]);
}

TEST_CASE("a ring across 8-NIC nodes runs as 8 channels and moves 1/8 of the bytes between nodes through each NIC") {
  const Run run(a100_nodes(2));
  const std::uint64_t bytes = 64 << 20;
  const LibraryCallPlan plan = plan_library_call(
      [&](std::uint64_t share) { return find_algorithm("ring").build(16, share, AlgorithmOptions(4)); }, bytes, 4,
      run.network, false, Protocol::simple);
  REQUIRE(plan.channels == 8);
  REQUIRE(plan.schedule.ranks == 8 * 16);
  REQUIRE(plan.schedule.protocol == Protocol::simple);
  // bytes leaving each NIC (its link towards the fabric), summed over every message's route
  std::map<int, double> out_of_nic;
  const Schedule full = expand(plan.schedule);
  double between_nodes = 0;
  for (int r = 0; r < full.ranks; ++r) {
    for (const Op& op : full.rank_ops(r)) {
      if (op.kind() != OpKind::send) continue;
      const int src = plan.accelerator_of[static_cast<std::size_t>(r)];
      const int dst = plan.accelerator_of[static_cast<std::size_t>(op.peer())];
      const auto b = static_cast<double>(full.span_bytes(op.span()));
      for (const RouteHop& h : run.topology.route(src, dst)) {
        const TopologyLink& link = run.topology.links()[static_cast<std::size_t>(h.link)];
        if (link.link_class != LinkClass::nic) continue;
        // a NIC's link runs from the NIC to the fabric (a_to_b: leaving the node)
        if (run.topology.vertex_kind(h.a_to_b ? link.a : link.b) == VertexKind::nic) {
          out_of_nic[h.a_to_b ? link.a : link.b] += b;
          between_nodes += b;
        }
      }
    }
  }
  REQUIRE(out_of_nic.size() == 16);  // every NIC of both nodes sends
  for (const auto& [nic, sent] : out_of_nic)
    CHECK(rel_diff(sent, between_nodes / 16) < 1e-6);
  // and the eight channels run the call faster than one ring through one NIC
  Schedule one = run.ring(bytes, Protocol::simple);
  FlowOptions laid(run.network);
  laid.accelerator_of = plan.accelerator_of;
  CHECK(run_flow(plan.schedule, laid).time_s < run.flow(one) / 4);
  // LL's cap is the whole call's: 8 channels share it (Ampere, 2 nodes: 22.5 GB/s of bus bandwidth)
  const LibraryCallPlan ll = plan_library_call(
      [&](std::uint64_t share) { return find_algorithm("ring").build(16, share, AlgorithmOptions(4)); }, 256 << 20, 4,
      run.network, false, Protocol::ll);
  REQUIRE(ll.channels == 8);
  FlowOptions ll_laid(run.network);
  ll_laid.accelerator_of = ll.accelerator_of;
  const double ll_busbw = static_cast<double>(256 << 20) / run_flow(ll.schedule, ll_laid).time_s * 2 * 15 / 16;
  CHECK(ll_busbw < 22.5e9);
  CHECK(ll_busbw > 0.8 * 22.5e9);
  // small calls keep to one channel, as NCCL's thread thresholds do
  const LibraryCallPlan small = plan_library_call(
      [&](std::uint64_t share) { return find_algorithm("ring").build(16, share, AlgorithmOptions(4)); }, 8 << 10, 4,
      run.network, true, Protocol::none);
  CHECK(small.channels == 1);
  CHECK(small.schedule.protocol == Protocol::ll);
}

namespace {

// A library call's plan runs by classes of ranks (at most a sixteenth as many as ranks) with the times, messages and
// bytes of simulating every rank.
void check_runs_by_classes(const Run& run, const LibraryCallPlan& plan) {
  FlowOptions o(run.network);
  o.accelerator_of = plan.accelerator_of;
  const ExecutionResult classes = run_flow(plan.schedule, o);
  o.lump_ranks = false;
  const ExecutionResult every = run_flow(plan.schedule, o);
  CHECK(classes.rank_classes > 0);
  CHECK(classes.rank_classes * 16 <= static_cast<std::size_t>(plan.schedule.ranks));
  CHECK(every.rank_classes == 0);
  CHECK(rel_diff(classes.time_s, every.time_s) < 1e-9);
  CHECK(classes.messages == every.messages);
  CHECK(classes.bytes_sent == every.bytes_sent);
}

}  // namespace

TEST_CASE("a library's channels on a rail-optimised fabric run by classes of ranks, with every rank's times") {
  // eager messages have no rounds to skip, so every message is simulated; where the cluster is symmetric (rails: every
  // node's NIC i alike) one rank of each class is enough
  ClusterSpec spec = a100_nodes(16);
  spec.fabric.rails = true;
  const Run run(spec);
  for (const std::uint64_t bytes : {std::uint64_t{64} << 10, std::uint64_t{25} << 20}) {
    CAPTURE(bytes);
    const LibraryCallPlan plan = plan_library_call(
        [&](std::uint64_t share) { return find_algorithm("ring").build(128, share, AlgorithmOptions(4)); }, bytes, 4,
        run.network, true, Protocol::none);
    REQUIRE(plan.schedule.compact());
    check_runs_by_classes(run, plan);
  }
}

TEST_CASE("on a 3-level rail-optimised fabric each rail is a pod of its own, and the channels still run by classes") {
  // radix 8: leaves of 4 ports, pods of 4 leaves (16 ports); 6 nodes of 8 NICs need 2 leaves a rail and a third level.
  // Each rail is cabled as a whole pod (a rail group): a ring channel's hops between nodes never leave it, and every
  // rail is alike, as on 2-level fabrics. Packed rails (pods mixing rails) made every rank a class of its own.
  ClusterSpec spec = a100_nodes(6);
  spec.fabric.rails = true;
  spec.fabric.radix = 8;
  const Run run(spec);
  REQUIRE(run.topology.fabric_switches() == 8 * (4 + 4) + 16);  // a pod of 4 leaves and 4 spines a rail, 16 cores
  const LibraryCallPlan plan = plan_library_call(
      [&](std::uint64_t share) { return find_algorithm("ring").build(48, share, AlgorithmOptions(4)); },
      std::uint64_t{25} << 20, 4, run.network, true, Protocol::simple);
  REQUIRE(plan.channels == 8);
  check_runs_by_classes(run, plan);
}

TEST_CASE("inside a full-mesh node the library's rings use every link direction once") {
  ClusterSpec spec =
      load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/validation/published/clusters/amd-mi300x.json");
  const Run run(spec);
  const Schedule one = run.ring(1 << 30, Protocol::none);
  REQUIRE(library_channels(run.network, one) == 7);  // 8 accelerators, 7 links each
  const std::vector<int> at = channel_placement(run.topology, run.network.accelerator_of, 7);
  REQUIRE(at.size() == 56);
  std::set<std::pair<int, int>> arcs;
  for (int c = 0; c < 7; ++c) {
    std::set<int> visited;
    for (int i = 0; i < 8; ++i) {
      visited.insert(at[static_cast<std::size_t>(c * 8 + i)]);
      arcs.emplace(at[static_cast<std::size_t>(c * 8 + i)], at[static_cast<std::size_t>(c * 8 + (i + 1) % 8)]);
    }
    CHECK(visited.size() == 8);  // each ring visits every accelerator
  }
  CHECK(arcs.size() == 56);  // and no two rings send over the same link in the same direction
  // so a large allreduce reaches about 7 links' worth of bus bandwidth (times NVLink's share: the file's generation is
  // hopper, 20.6 of 25 GB/s), not one link's
  const LibraryCallPlan plan = plan_library_call(
      [&](std::uint64_t share) { return find_algorithm("ring").build(8, share, AlgorithmOptions(4)); }, 1 << 30, 4,
      run.network, false, Protocol::simple);
  FlowOptions laid(run.network);
  laid.accelerator_of = plan.accelerator_of;
  const double busbw = static_cast<double>(1 << 30) / run_flow(plan.schedule, laid).time_s * 2 * 7 / 8;
  CHECK(busbw > 6 * 64e9 * 20.6 / 25);
  CHECK(busbw < 7 * 64e9 * 20.6 / 25);
}

TEST_CASE("across full-mesh nodes the channels take paths through each node that share no link direction") {
  ClusterSpec spec =
      load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/validation/published/clusters/amd-mi300x.json");
  spec.nodes = 2;
  const Run run(spec);
  const Schedule one = run.ring(1 << 30, Protocol::none);
  REQUIRE(library_channels(run.network, one) == 8);  // a channel a NIC across nodes
  const std::vector<int> at = channel_placement(run.topology, run.network.accelerator_of, 8);
  REQUIRE(at.size() == 8 * 16);
  for (int node = 0; node < 2; ++node) {
    std::set<std::pair<int, int>> arcs;
    std::set<int> entries, exits;
    for (int c = 0; c < 8; ++c) {
      const auto base = static_cast<std::size_t>(c * 16 + node * 8);
      std::set<int> visited;
      for (std::size_t i = 0; i < 8; ++i) {
        CHECK(run.topology.node_of(at[base + i]) == node);
        visited.insert(at[base + i]);
        if (i + 1 < 8) arcs.emplace(at[base + i], at[base + i + 1]);
      }
      CHECK(visited.size() == 8);  // each channel's path visits every accelerator of the node
      entries.insert(at[base] - node * 8);
      exits.insert(at[base + 7] - node * 8);
      CHECK(at[base] - node * 8 == c);  // channel c enters through accelerator c (its NIC)
    }
    CHECK(arcs.size() == 56);    // the 8 paths use each of the 56 link directions once
    CHECK(entries.size() == 8);  // every NIC receives one channel
    CHECK(exits.size() == 8);    // and sends one on
  }
  // so a large allreduce across two such nodes is bound by the NICs (8 x 400 Gb/s), not by one xGMI link that every
  // channel would otherwise cross (60 GB/s of bus bandwidth before)
  const LibraryCallPlan plan = plan_library_call(
      [&](std::uint64_t share) { return find_algorithm("ring").build(16, share, AlgorithmOptions(4)); }, 1 << 30, 4,
      run.network, false, Protocol::simple);
  REQUIRE(plan.channels == 8);
  FlowOptions laid(run.network);
  laid.accelerator_of = plan.accelerator_of;
  const double busbw = static_cast<double>(1 << 30) / run_flow(plan.schedule, laid).time_s * 2 * 15 / 16;
  CHECK(busbw > 0.8 * 8 * 50e9);
  CHECK(busbw <= 8 * 50e9);
}

TEST_CASE("the ring's --channels: K rings at once are a correct allreduce, timed as their closed form says") {
  for (const auto& [ranks, channels, group] :
       std::vector<std::tuple<int, int, int>>{{16, 8, 8}, {12, 3, 4}, {7, 2, 1}, {2, 4, 2}, {24, 5, 8}}) {
    AlgorithmOptions options(4);
    options.set(channels_option.name, static_cast<std::uint64_t>(channels));
    options.set(channel_group_option.name, static_cast<std::uint64_t>(group));
    const Schedule s = find_algorithm("ring").build(ranks, 1 << 20, options);
    CAPTURE(ranks, channels, group);
    const VerifyReport report = verify(s);
    CHECK(report.ok);
    AnalyticalOptions star;
    star.cost.gap_s = 0;  // (without contention: each of a step's K messages of n/(KP) at the full bandwidth)
    CHECK(rel_diff(run_analytical(s, star).time_s,
                   find_algorithm("ring").closed_form_seconds(ranks, 1 << 20, star.cost, options)) < 0.02);
  }
  AlgorithmOptions bad(4);
  bad.set(channels_option.name, 2);
  bad.set(channel_group_option.name, 5);
  CHECK_THROWS_AS(find_algorithm("ring").build(16, 1024, bad), OptionError);
}

TEST_CASE("a tree in a library protocol is pipelined in NCCL's chunks for it, unless --segment-size is given") {
  // NCCL's buffers a step (enqueue.cc): Simple 512 KiB, LL 32 KiB of data, LL128 576,000 B halved for small calls
  CHECK(tree_chunk_bytes(Protocol::simple, 1e9, 8, 16, 8) == 524288);
  CHECK(tree_chunk_bytes(Protocol::ll, 1e9, 8, 16, 8) == 32768);
  CHECK(tree_chunk_bytes(Protocol::ll128, 1e12, 8, 16, 8) == 576000);
  // 2 MB a channel on 16 nodes of 8: fewer than (1 + 4 + 0.8) x 64 / 8 chunks of 576,000 B: halved down to 72,000
  CHECK(tree_chunk_bytes(Protocol::ll128, 16e6, 8, 16, 8) == 72000);
  CHECK(tree_chunk_bytes(Protocol::ll128, 1e5, 8, 16, 8) == 18000);  // then x 16 / 8 chunks, while above 32 KiB
  const Run sixteen(a100_nodes(16));
  AlgorithmOptions options(4);
  options.set("ranks-per-node", std::uint64_t{8});
  const AlgorithmInfo& tree = find_algorithm("chain-dbtree");
  const LibraryCallPlan chunked =
      plan_library_call(tree, 128, options, 16'000'000, sixteen.network, false, Protocol::ll128);
  AlgorithmOptions given = options;
  given.set("segment-size", std::uint64_t{1} << 20);
  const LibraryCallPlan megabyte =
      plan_library_call(tree, 128, given, 16'000'000, sixteen.network, false, Protocol::ll128);
  REQUIRE(chunked.channels == 8);
  // 1 MB a tree and channel: one 1 MiB segment, or 14 of NCCL's 72,000-byte chunks
  CHECK(chunked.schedule.chunks.size() == 14 * megabyte.schedule.chunks.size());
}

TEST_CASE(
    "an AMD Instinct accelerator's NVIDIA contemporary gives RCCL its constants, and MI300X runs MSCCL by default") {
  CHECK(contemporary_generation_of_amd_accelerator("MI300X") == "hopper");
  CHECK(contemporary_generation_of_amd_accelerator("AMD Instinct MI250X") == "ampere");
  CHECK(contemporary_generation_of_amd_accelerator("mi210") == "ampere");
  CHECK(contemporary_generation_of_amd_accelerator("MI355X") == "blackwell");
  CHECK(contemporary_generation_of_amd_accelerator("MI3000").empty());
  CHECK(contemporary_generation_of_amd_accelerator("H100-SXM5-80GB").empty());
  CHECK(generation_of_accelerator("MI300X").empty());  // (NCCL's: NVIDIA parts only)
  CHECK(rccl_msccl_by_default("MI300X"));
  CHECK_FALSE(rccl_msccl_by_default("MI250X"));
}

TEST_CASE("all-to-all gather and scatter move in NCCL's send and receive protocol: LL up to 16 KiB a peer in a node") {
  // p2p_protocol itself: LL inside a node up to the threshold, Simple above it and across the network at any size
  const CollectiveLibrary nccl = a100_nodes(1).library;
  CHECK(p2p_protocol(nccl, 16384, false) == Protocol::ll);
  CHECK(p2p_protocol(nccl, 16385, false) == Protocol::simple);
  CHECK(p2p_protocol(nccl, 8, true) == Protocol::simple);
  CHECK(p2p_protocol(CollectiveLibrary{}, 8, false) == Protocol::none);
  CollectiveLibrary no_ll = nccl;
  no_ll.allow_ll = false;
  CHECK(p2p_protocol(no_ll, 8, false) == Protocol::simple);

  const auto alltoall = [](const Run& run, std::uint64_t peer_bytes) {
    const auto p = static_cast<std::uint64_t>(run.topology.accelerators());
    return find_algorithm("direct", Collective::alltoall)
        .build(static_cast<int>(p), peer_bytes * p * p, AlgorithmOptions(4));
  };
  const Run one_node(a100_nodes(1));
  CHECK(tuned_protocol(one_node.network, alltoall(one_node, 4096)) == Protocol::ll);
  CHECK(tuned_protocol(one_node.network, alltoall(one_node, 16384)) == Protocol::ll);
  CHECK(tuned_protocol(one_node.network, alltoall(one_node, 32768)) == Protocol::simple);
  // across nodes even the smallest messages take Simple, where the allreduce tuner would pick LL
  const Run two_nodes(a100_nodes(2));
  CHECK(tuned_protocol(two_nodes.network, alltoall(two_nodes, 1024)) == Protocol::simple);
  CHECK(tuned_protocol(two_nodes.network, two_nodes.ring(16 << 10, Protocol::none)) == Protocol::ll);
  // the plan the executors run carries it
  const AlgorithmInfo& direct = find_algorithm("direct", Collective::alltoall);
  const LibraryCallPlan plan =
      plan_library_call(direct, 16, AlgorithmOptions(4), 16 * 16 * 1024, two_nodes.network, true, Protocol::none);
  CHECK(plan.schedule.protocol == Protocol::simple);
}
