// Model parallelism and sharded data parallelism: pipeline schedules, tensor and ZeRO volumes, memory, and that the
// degenerate layout is plain data parallelism.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "models/cluster.hpp"
#include "models/devices.hpp"
#include "models/model_zoo.hpp"
#include "models/parallel.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/model_file.hpp"
#include "scenarios/scenario_file.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/parallel.hpp"
#include "sim/predict.hpp"
#include "sim/scenario_step.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/step_program.hpp"
#include "sim/topology.hpp"

using namespace dtsim;

namespace {

// Bytes one rank of the schedule sends (every rank of these ring schedules sends the same).
double bytes_sent_by(const Schedule& compact, int rank) {
  const Schedule s = expand(compact);
  double sent = 0;
  for (const Op& op : s.rank_ops(rank)) {
    if (op.kind() == OpKind::send) sent += static_cast<double>(s.span_bytes(op.span()));
  }
  return sent;
}

Scenario scenario(const std::string& name) {
  return load_scenario_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/training/" + name + ".json", DTSIM_SOURCE_DIR);
}

}  // namespace

TEST_CASE("one stage, one tensor shard and no sharding is plain data parallelism") {
  for (const char* name : {"resnet50-v100", "bert-large-dgx-a100"}) {
    CAPTURE(name);
    const Scenario sc = scenario(name);
    for (int accelerators : {8, 16}) {
      CAPTURE(accelerators);
      ParallelLayout layout;
      layout.data = accelerators;
      const ParallelPrediction p = predict_parallel(sc.setup, sc.cluster, layout, "ring");
      const Prediction plain = predict_step(sc.setup, sc.cluster, accelerators, "ring");
      REQUIRE(p.fits);
      CHECK(p.step_s == Approx(plain.step.step_s).epsilon(1e-9));
      CHECK(p.data_exposed_s == Approx(plain.step.exposed_comm_s).margin(1e-12));
      CHECK(p.bubble_s == Approx(0).margin(1e-12));
      CHECK(p.memory.total_bytes() == Approx(plain.memory.total_bytes()));
    }
  }
}

namespace {

// A pipeline of `stages` ranks, one per stage, each stage one layer (forward 1 s, backward 2 s per micro-batch), and
// between stages messages of one byte on a star whose links move `Bps` bytes a second with no latency.
StepProgram pipeline_program(int stages, int micro_batches, PipelineSchedule schedule) {
  StepProgram program;
  program.ranks = stages;
  program.micro_batches = micro_batches;
  program.schedule = schedule;
  program.steps = 1;
  for (Stream s : {Stream::send_forward, Stream::send_backward, Stream::receive_forward, Stream::receive_backward})
    program.use_stream(s);
  for (int s = 0; s < stages; ++s) {
    program.stage_of.push_back(s);
    StageStep stage;
    stage.layers.push_back({1.0, 2.0, no_segment});
    program.stages.push_back(stage);
  }
  for (int s = 0; s + 1 < stages; ++s) {
    const std::pair<int, int> pair[] = {{s, s + 1}};
    program.connect_stages(s, pair, 1);
  }
  return program;
}

FlowOptions star(double Bps) {
  FlowOptions o;
  o.cost.alpha_s = 0;
  o.cost.bandwidth_Bps = Bps;
  return o;
}

}  // namespace

TEST_CASE("the GPipe bubble of an idealised pipeline is (p-1)/(m+p-1), and 1F1B's is the same") {
  for (int p : {2, 4, 8}) {
    for (int m : {1, 4, 16}) {
      CAPTURE(p, m);
      const StepRun gpipe = run_flow_step(pipeline_program(p, m, PipelineSchedule::gpipe), star(1e18));
      const StepRun one = run_flow_step(pipeline_program(p, m, PipelineSchedule::one_f_one_b), star(1e18));
      CHECK(gpipe.slowest.step_s == Approx((m + p - 1) * 3.0));
      CHECK(gpipe.slowest.bubble_s / gpipe.slowest.step_s == Approx(ideal_bubble_fraction(p, m)));
      CHECK(gpipe.slowest.compute_s == Approx(m * 3.0));
      CHECK(one.slowest.step_s == Approx(gpipe.slowest.step_s));
      CHECK(one.slowest.bubble_s / one.slowest.step_s == Approx(ideal_bubble_fraction(p, m)));
    }
  }
  // transfers between stages lengthen the pipeline: each boundary is crossed once on the way in and once back
  const StepRun slow = run_flow_step(pipeline_program(4, 8, PipelineSchedule::gpipe), star(2.0));  // 0.5 s a message
  CHECK(slow.slowest.step_s > (8 + 3) * 3.0 + 3 * 1.0 - 1e-9);
}

namespace {

// Two nodes of 4 accelerators (NVSwitch), a NIC per accelerator, on a two-level fat-tree of radix 8 (a leaf: 4 NIC
// ports, 4 / oversubscription uplinks); no latency anywhere, so that a message's time is its bytes over its rate.
ClusterSpec two_leaves(double oversubscription, double inter_node_Bps) {
  ClusterSpec c;
  c.name = "two-leaves";
  c.nodes = 2;
  c.node.accelerators = 4;
  c.node.intra_kind = IntraKind::nvswitch;
  c.node.intra = {300e9, 0, 0};
  c.node.pcie = {400e9, 0, 0};
  c.node.cpu_link = {400e9, 0, 0};
  c.node.nics = 4;
  c.node.nic = {inter_node_Bps, 0, 0};
  c.node.reduce_Bps = 1e12;
  c.fabric.kind = FabricKind::fat_tree;
  c.fabric.radix = 8;
  c.fabric.levels = 2;
  c.fabric.oversubscription = oversubscription;
  c.fabric.link = {inter_node_Bps, 0, 0};
  return c;
}

}  // namespace

TEST_CASE(
    "one step program gives the same times on SimGrid, the flow engine and the analytical network, contention-free") {
  for (PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    CAPTURE(to_string(schedule));
    const StepProgram program = pipeline_program(4, 6, schedule);
    const StepRun flow = run_flow_step(program, star(4.0));
    FlowOptions alone = star(4.0);
    alone.contention = false;
    const StepRun analytical = run_flow_step(program, alone);
    SimGridOptions sg;
    sg.cost.alpha_s = 0;
    sg.cost.bandwidth_Bps = 4.0;
    const StepRun simgrid = run_simgrid_step(program, sg);
    CHECK(flow.slowest.step_s > 6 * 3.0);  // (the messages cost something)
    for (const StepRun* other : {&simgrid, &analytical}) {
      CHECK(other->slowest.step_s == Approx(flow.slowest.step_s).epsilon(1e-9));
      CHECK(other->slowest.bubble_s == Approx(flow.slowest.bubble_s).epsilon(1e-9));
      CHECK(other->slowest_rank == flow.slowest_rank);
    }
  }
}

TEST_CASE("the flow engine without contention is the analytical executor: each message as alone on its route") {
  const ClusterSpec cluster = two_leaves(4, 2e9);  // a 4:1 leaf: contention changes the times
  const Topology topology(cluster);
  for (const char* name : {"ring", "dbtree", "direct", "butterfly"}) {
    CAPTURE(name);
    const Schedule s = find_algorithm(name).build(8, 64'000'000, AlgorithmOptions{});
    AnalyticalOptions an;
    an.topology = &topology;
    for (int a = 0; a < 8; ++a)
      an.accelerator_of.push_back(a);
    FlowOptions alone(static_cast<const NetworkCost&>(an));
    alone.contention = false;
    alone.pad_chunks_within = 0;  // every chunk timed at its own size, as the analytical executor does
    alone.pad_chunks_bytes = 0;
    FlowOptions shared = alone;
    shared.contention = true;
    const double analytical = run_analytical(s, an).time_s;
    CHECK(run_flow(s, alone).time_s == Approx(analytical).epsilon(1e-9));
    if (std::string(name) == "direct") CHECK(run_flow(s, shared).time_s > analytical * 1.01);
  }
}

TEST_CASE("1F1B keeps at most P - s micro-batches of activations in flight, GPipe all of them") {
  const Scenario sc = scenario("gpt2-xl-3d");
  ParallelLayout layout = sc.parallel->layout(1024);
  layout.schedule = PipelineSchedule::gpipe;
  const double gpipe = parallel_memory(sc.setup, layout, 32, 0).activation_bytes;
  layout.schedule = PipelineSchedule::one_f_one_b;
  const double one = parallel_memory(sc.setup, layout, 32, 0).activation_bytes;
  CHECK(gpipe / one == Approx(static_cast<double>(layout.micro_batches) / layout.pipeline));
}

TEST_CASE("ZeRO-3 shards weights, gradients and optimizer states 1/N over the data-parallel ranks") {
  const Scenario sc = scenario("gpt2-xl-dgx-h100");
  ParallelLayout layout;
  layout.sharding = Sharding::zero3;
  layout.prefetch = false;
  const double value = gradient_bytes_per_param(sc.setup.compute.precision);
  double largest = 0;
  for (const Layer& l : sc.setup.model.layers)
    largest = std::max(largest, l.params);
  const MemoryUse one = memory_use(sc.setup, 4);
  for (int d : {1, 2, 8, 64}) {
    CAPTURE(d);
    layout.data = d;
    const MemoryUse m = parallel_memory(sc.setup, layout, 4, 0);
    CHECK(m.gradient_bytes * d == Approx(one.gradient_bytes));
    CHECK(m.optimizer_bytes * d == Approx(one.optimizer_bytes));
    CHECK((m.weights_bytes - largest * value) * d == Approx(one.weights_bytes));  // plus one gathered layer
    CHECK(m.activation_bytes == Approx(one.activation_bytes));
  }
  layout.data = 8;
  layout.sharding = Sharding::zero1;
  const MemoryUse z1 = parallel_memory(sc.setup, layout, 4, 0);
  CHECK(z1.optimizer_bytes * 8 == Approx(one.optimizer_bytes));
  CHECK(z1.gradient_bytes == Approx(one.gradient_bytes));
  layout.sharding = Sharding::zero2;
  CHECK(parallel_memory(sc.setup, layout, 4, 0).gradient_bytes * 8 == Approx(one.gradient_bytes));
}

TEST_CASE("bytes sent per step match the known formulas, counted from the schedules that move them") {
  const Scenario sc = scenario("gpt2-xl-3d");
  const ParallelLayout layout = sc.parallel->layout(1024);  // 64 d x 4 t x 4 p, 16 micro-batches of 2
  const int replica = 32;
  const double value = gradient_bytes_per_param(sc.setup.compute.precision);
  const auto ranges = split_stages(sc.setup.model, layout.pipeline, layout.tensor);
  for (int stage : {0, 1, 3}) {
    CAPTURE(stage);
    const Model m = stage_model(sc.setup.model, ranges[static_cast<std::size_t>(stage)], layout.tensor);
    const CommVolume v = comm_volume(sc.setup, layout, replica, stage);
    // data parallel: the ring allreduce of the stage's gradients over the 64 replicas
    const auto gradient = static_cast<std::uint64_t>(std::llround(m.params() * value / 4)) * 4;
    CHECK(v.data_bytes == Approx(bytes_sent_by(ring_allreduce(layout.data, gradient), 0)).epsilon(1e-6));
    CHECK(v.data_bytes == Approx(2.0 * (layout.data - 1) / layout.data * m.params() * value));
    // tensor parallel: per split layer and micro-batch, an allreduce in forward and one in backward
    double tensor = 0;
    for (const Layer& l : m.layers) {
      if (!tensor_split(l)) continue;
      const auto bytes = static_cast<std::uint64_t>(2 * l.tensor_parallel_values * value);  // 2 sequences
      tensor += 2 * layout.micro_batches * bytes_sent_by(ring_allreduce(layout.tensor, bytes), 0);
    }
    CHECK(v.tensor_bytes == Approx(tensor).epsilon(1e-6));
    // pipeline: s h values per sample forward and backward across each boundary, 1/T of it per tensor rank
    const double sh = 1024.0 * 1600.0;
    const int boundaries = (stage > 0 ? 1 : 0) + (stage < layout.pipeline - 1 ? 1 : 0);
    CHECK(v.pipeline_bytes == Approx(boundaries * sh * value * replica / layout.tensor));
  }
  // ZeRO-3: reduce-scatter the gradients, allgather the parameters twice: 3 (D-1)/D
  ParallelLayout z3 = layout;
  z3.sharding = Sharding::zero3;
  const Model m0 = stage_model(sc.setup.model, ranges[0], layout.tensor);
  const auto gradient = static_cast<std::uint64_t>(std::llround(m0.params() * value / 4)) * 4;
  const double counted = bytes_sent_by(ring_reduce_scatter(layout.data, gradient), 0) +
                         2 * bytes_sent_by(ring_allgather(layout.data, gradient), 0);
  CHECK(comm_volume(sc.setup, z3, replica, 0).data_bytes == Approx(counted).epsilon(1e-6));
}

TEST_CASE("replicated groups run side by side: on a star each copy takes as long as one alone") {
  const Schedule ring = ring_allreduce(4, 4000000);
  const Schedule three = replicate_groups(ring, 3);
  REQUIRE(three.ranks == 12);
  for (int g = 0; g < 3; ++g) {
    for (int r = 0; r < 4; ++r) {
      for (const Op& op : three.rank_ops(g * 4 + r)) {
        if (op.kind() != OpKind::compute) {
          CHECK(op.peer() / 4 == g);
        }
      }
    }
  }
  const SimGridOptions sg;
  CHECK(run_simgrid(three, sg).time_s == Approx(run_simgrid(ring, sg).time_s).epsilon(1e-9));
}

TEST_CASE("a data x tensor x pipeline layout: the bubble and tensor allreduces appear in the breakdown") {
  const Scenario sc = scenario("gpt2-xl-3d");
  ParallelLayout layout = sc.parallel->layout(64);  // 4 d x 4 t x 4 p on 8 nodes
  const ParallelPrediction p = predict_parallel(sc.setup, sc.cluster, layout, "ring", true);
  REQUIRE(p.fits);
  CHECK(p.tensor_comm_s > 0);
  CHECK(p.bubble_s > 0);
  CHECK(p.data_comm_s > 0);
  const double parts = p.compute_s + p.tensor_comm_s + p.bubble_s + p.data_exposed_s + p.input_stall_s + p.optimizer_s;
  CHECK(parts == Approx(p.step_s).epsilon(1e-6));
  // 16 micro-batches on 4 stages: about the idealised bubble, which is exact for equal stages; the slowest rank's stage
  // (whose breakdown this is) waits less than that for the others when the greedy cut leaves it the largest (the
  // output layer, 1/4 of 50,257 x 1,600 a rank, comes whole to the last stage)
  const double bubble = p.bubble_s / (p.step_s - p.data_exposed_s - p.optimizer_s);
  CHECK(bubble >= 0.9 * ideal_bubble_fraction(4, 16));
  CHECK(bubble <= 1.5 * ideal_bubble_fraction(4, 16));
  CHECK(p.pipeline_trace.spans.size() == static_cast<std::size_t>(2 * 4 * 16));
  // more micro-batches, smaller bubble
  layout.micro_batches = 32;
  const ParallelPrediction more = predict_parallel(sc.setup, sc.cluster, layout, "ring");
  CHECK(more.bubble_s < p.bubble_s);
}

TEST_CASE("pipeline sends crossing an oversubscribed link: slower than on full bisection, by the link's share") {
  const Scenario sc = scenario("gpt2-xl-3d");
  ParallelLayout layout;  // one replica: 4 tensor ranks per stage, a stage per node; every boundary crosses the fabric
  layout.tensor = 4;
  layout.pipeline = 2;
  layout.micro_batches = 8;
  const double Bps = 2e9;  // slow enough that the activations' transfers matter
  const ParallelPrediction full = predict_parallel(sc.setup, two_leaves(1, Bps), layout, "ring");
  const ParallelPrediction oversubscribed = predict_parallel(sc.setup, two_leaves(4, Bps), layout, "ring");
  REQUIRE(full.fits);
  // 4:1: the 4 tensor ranks' messages share the leaf's one uplink, each at a quarter of its rate...
  CHECK(oversubscribed.step_s > full.step_s * 1.01);
  CHECK(oversubscribed.bubble_s > full.bubble_s);
  CHECK(oversubscribed.compute_s == Approx(full.compute_s).epsilon(1e-12));
  CHECK(oversubscribed.tensor_comm_s == Approx(full.tensor_comm_s).epsilon(1e-9));  // NVSwitch: not on the fabric
  // ...as each would move on a full-bisection fabric of a quarter of the bandwidth
  const ParallelPrediction quarter = predict_parallel(sc.setup, two_leaves(1, Bps / 4), layout, "ring");
  CHECK(oversubscribed.step_s == Approx(quarter.step_s).epsilon(1e-9));
}

TEST_CASE("a layout's classes of ranks: one replica and one tensor rank of each stage run, every rank's times exact") {
  // 4 replicas x 2 stages, a stage a node of two_leaves' 4:1 fat-tree: each stage's buckets reduced by compact rings
  // over its replicas (NVSwitch), a stage's activations and gradients to the other node over the fabric
  const ClusterSpec cluster = two_leaves(4, 2e9);
  const Topology topology(cluster);
  for (PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    CAPTURE(to_string(schedule));
    StepProgram program;
    program.ranks = 8;
    program.micro_batches = 4;
    program.schedule = schedule;
    program.steps = 1;
    for (Stream s : {Stream::send_forward, Stream::send_backward, Stream::receive_forward, Stream::receive_backward,
                     Stream::reduce})
      program.use_stream(s);
    for (int stage = 0; stage < 2; ++stage) {
      StageStep st;
      st.layers = {{1e-3, 2e-3, no_segment}, {2e-3, 4e-3, no_segment}, {1e-3, 2e-3, no_segment}};
      st.bucket_ready_after = {1, 0};
      std::vector<int> replicas;
      for (int d = 0; d < 4; ++d) {
        program.stage_of.push_back(stage);
        replicas.push_back(program.unit(4 * stage + d, Stream::reduce));
      }
      for (std::uint64_t bytes : {40'000'000ULL, 8'000'000ULL}) {
        const Schedule ring = ring_allreduce(4, bytes);
        REQUIRE(ring.compact());
        st.bucket_segment.push_back(program.add_segment(place_groups(ring, replicas, program.units)));
      }
      program.stages.push_back(st);
    }
    const std::vector<std::pair<int, int>> pairs = {{0, 4}, {1, 5}, {2, 6}, {3, 7}};
    program.connect_stages(0, pairs, 16'000'000);
    FlowOptions lumped;
    lumped.topology = &topology;
    for (std::size_t k = 0; k < stream_count; ++k) {
      for (int r = 0; r < program.ranks && program.stream_base[k] >= 0; ++r)
        lumped.accelerator_of.push_back(r);
    }
    lumped.lump_always = true;                 // (this small program would run in full otherwise)
    for (const bool rounds : {false, true}) {  // both engines with rounds per segment, or both without
      CAPTURE(rounds);
      lumped.rounds = rounds;
      FlowOptions every = lumped;
      every.lump_ranks = false;
      const StepRun classes = run_flow_step(program, lumped);
      const StepRun ranks = run_flow_step(program, every);
      CHECK(classes.driven_ranks == 2);  // a rank of each stage
      CHECK(ranks.driven_ranks == 8);
      CHECK(classes.slowest.reduce_s > 2e-4);  // (the rings cost what 48 MB on 300 GB/s links cost, at least)
      CHECK(classes.slowest.step_s == Approx(ranks.slowest.step_s).epsilon(1e-12));
      CHECK(classes.slowest.bubble_s == Approx(ranks.slowest.bubble_s).epsilon(1e-12));
      CHECK(classes.slowest.exposed_s == Approx(ranks.slowest.exposed_s).epsilon(1e-12));
      CHECK(classes.slowest.reduce_s == Approx(ranks.slowest.reduce_s).epsilon(1e-12));
      CHECK(program.stage_of[static_cast<std::size_t>(classes.slowest_rank)] ==
            program.stage_of[static_cast<std::size_t>(ranks.slowest_rank)]);
      if (!rounds) continue;
      // in rounds, the rings' repetitions that run alone are skipped by the classes as by the ranks: the same times in
      // fewer instants
      FlowOptions every_step = lumped;
      every_step.skip_repeats = false;
      const StepRun unskipped = run_flow_step(program, every_step);
      CHECK(unskipped.driven_ranks == 2);
      CHECK(classes.batches < unskipped.batches);
      CHECK(classes.slowest.step_s == Approx(unskipped.slowest.step_s).epsilon(1e-12));
      CHECK(classes.slowest.reduce_s == Approx(unskipped.slowest.reduce_s).epsilon(1e-12));
    }
  }
}

TEST_CASE(
    "tensor parallelism over two nodes: its allreduces cross the NICs, a group of part of a node or whole nodes") {
  const Scenario sc = scenario("gpt2-xl-3d");  // DGX H100: 8 GPUs a node, NVSwitch inside, 400 Gb/s NICs
  ParallelLayout inside;
  inside.tensor = 8;
  inside.data = 2;
  ParallelLayout across;
  across.tensor = 16;
  const ParallelPrediction node = predict_parallel(sc.setup, sc.cluster, inside, "ring");
  const ParallelPrediction nodes = predict_parallel(sc.setup, sc.cluster, across, "ring");
  REQUIRE(node.fits);
  REQUIRE(nodes.fits);
  // the same global batch; twice the values per allreduce, over a ring whose slowest links are NICs, not NVLink
  CHECK(nodes.global_batch == node.global_batch);
  CHECK(nodes.tensor_comm_s > 4 * node.tensor_comm_s);
  CHECK(nodes.step_s > node.step_s);
  ParallelLayout twelve;
  twelve.tensor = 12;
  CHECK_THROWS_WITH(predict_parallel(sc.setup, sc.cluster, twelve, "ring"),
                    Catch::Contains("must divide the accelerators of a node (8) or be a multiple of them"));
}

TEST_CASE("simulate_step runs predict_step for plain data parallelism and predict_parallel for a layout") {
  const Scenario plain_sc = scenario("resnet50-v100");
  StepRequest plain;
  plain.accelerators = 8;
  plain.algorithm = "ring";
  const StepResult p = simulate_step(plain_sc.setup, plain_sc.cluster, plain);
  REQUIRE(p.plain() != nullptr);
  const Prediction direct = predict_step(plain_sc.setup, plain_sc.cluster, 8, "ring", nullptr, auto_backend(8));
  CHECK(p.step_s() == direct.step.step_s);
  CHECK(p.exposed_comm_s() == direct.step.exposed_comm_s);
  CHECK(p.layout_text() == "data parallel");
  CHECK(one_replica(plain).accelerators == 1);

  const Scenario sc = scenario("gpt2-xl-3d");
  StepRequest layered;
  layered.accelerators = 64;
  layered.algorithm = "ring";
  layered.layout = sc.parallel->layout(64);
  const StepResult l = simulate_step(sc.setup, sc.cluster, layered);
  REQUIRE(l.parallel() != nullptr);
  const ParallelPrediction direct_layout = predict_parallel(sc.setup, sc.cluster, *layered.layout, "ring");
  CHECK(l.step_s() == direct_layout.step_s);
  CHECK(l.exposed_comm_s() == direct_layout.data_exposed_s);
  CHECK(l.global_batch() == sc.setup.batch * 64);  // weak scaling: the batch is per accelerator
  const StepRequest one = one_replica(layered);
  CHECK(one.accelerators == 16);  // 4 t x 4 p
  CHECK(one.layout->data == 1);
  // a layout that does not cover the accelerators is refused, not truncated
  layered.accelerators = 48;
  CHECK_THROWS_AS(simulate_step(sc.setup, sc.cluster, layered), std::invalid_argument);
  CHECK_THROWS_AS(sc.parallel->layout(40), std::invalid_argument);  // not a multiple of 4 x 4
}

TEST_CASE("the last gradient bucket's allreduce alone is a floor of the exposed communication") {
  const Scenario sc = scenario("resnet50-v100");
  // the buckets hold every gradient, and the last one the first layers
  const std::vector<GradientBucket> buckets = gradient_buckets(sc.setup);
  REQUIRE(buckets.size() > 1);
  double bytes = 0;
  for (const GradientBucket& b : buckets)
    bytes += static_cast<double>(b.bytes);
  CHECK(bytes == Approx(sc.setup.model.params() * 4).epsilon(1e-9));
  CHECK(buckets.back().first_layer == 0);
  CHECK(buckets.front().last_layer == sc.setup.model.layers.size() - 1);
  for (std::size_t b = 1; b < buckets.size(); ++b)
    CHECK(buckets[b].last_layer + 1 == buckets[b - 1].first_layer);
  for (const char* algorithm : {"ring", "tree", "ps"}) {
    for (TrainingSetup setup : {sc.setup, [&] {
                                  TrainingSetup bigger = sc.setup;
                                  bigger.batch *= 4;
                                  return bigger;
                                }()}) {
      CAPTURE(algorithm, setup.batch);
      const Prediction p = predict_step(setup, sc.cluster, 8, algorithm);
      const LastBucket last = last_bucket_alone(setup, sc.cluster, 8, algorithm, Backend::simgrid);
      CHECK(last.bucket.bytes == buckets.back().bytes);
      CHECK(last.alone_s > 0);
      // the bucket is ready only when backward ends: the step waits at least its allreduce
      CHECK(p.step.exposed_comm_s >= last.alone_s * (1 - 1e-9));
    }
  }
  // a layout: every (stage, tensor rank) group reduces its stage's last bucket at once
  const Scenario gpt = scenario("gpt2-xl-3d");
  const ParallelLayout layout = gpt.parallel->layout(64);
  const ParallelPrediction p = predict_parallel(gpt.setup, gpt.cluster, layout, "ring");
  const LastBucket last = last_bucket_alone(gpt.setup, gpt.cluster, layout, "ring", p.simulated_stage);
  CHECK(last.alone_s > 0);
  CHECK(p.data_exposed_s >= last.alone_s * (1 - 1e-9));
  CHECK_THROWS_AS(last_bucket_alone(gpt.setup, gpt.cluster, gpt.parallel->layout(16), "ring", 0),
                  std::invalid_argument);  // one replica: nothing to reduce
}

TEST_CASE("weak scaling: every layout of A accelerators trains batch x A samples per step, the same global batch") {
  Scenario sc = scenario("gpt2-xl-3d");  // weak, 2 sequences per accelerator
  REQUIRE(sc.setup.scaling == ScalingMode::weak);
  const int per_accelerator = sc.setup.batch;
  for (int accelerators : {16, 64}) {
    CAPTURE(accelerators);
    const std::vector<ParallelLayout> layouts = candidate_layouts(sc.setup, sc.cluster, accelerators);
    REQUIRE(layouts.size() > 3);
    bool pure_data = false;
    bool deep_pipeline = false;
    for (const ParallelLayout& layout : layouts) {
      CAPTURE(layout.describe());
      const int replica = replica_batch(sc.setup, layout);
      CHECK(replica == per_accelerator * layout.tensor * layout.pipeline);
      CHECK(replica * layout.data == per_accelerator * accelerators);
      CHECK(replica % layout.micro_batches == 0);
      pure_data = pure_data || layout.data == accelerators;
      deep_pipeline = deep_pipeline || layout.data == 1;
    }
    CHECK(deep_pipeline);  // 1-way and all-way data parallelism are ranked on the same global batch
    CHECK(pure_data);
  }
  // what predict_parallel trains matches, and the pure data-parallel layout is plain data parallelism's batch
  ParallelLayout layout;
  layout.data = 2;
  layout.tensor = 2;
  layout.pipeline = 4;
  layout.micro_batches = 8;
  const ParallelPrediction p = predict_parallel(sc.setup, sc.cluster, layout, "ring");
  CHECK(p.replica_batch == per_accelerator * 8);
  CHECK(p.global_batch == per_accelerator * 16);
  CHECK(p.micro_batch == Approx(per_accelerator * 8 / 8.0));
  // strong scaling splits the one global batch over the replicas, and refuses what does not divide
  sc.setup.scaling = ScalingMode::strong;
  sc.setup.batch = 96;
  CHECK(replica_batch(sc.setup, layout) == 48);
  layout.data = 5;
  CHECK_THROWS_AS(replica_batch(sc.setup, layout), std::invalid_argument);
}

TEST_CASE("expert parallelism: experts split E ways, all-to-alls around them, their gradients over D/E replicas") {
  const Scenario sc = scenario("mixtral-8x7b-ep");  // 64 H100s, 8-way experts in each node, zero1
  REQUIRE(sc.parallel);
  const ParallelLayout layout = sc.parallel->layout(64);
  REQUIRE(layout.expert == 8);
  REQUIRE(layout.data == 64);
  const ParallelPrediction p = predict_parallel(sc.setup, sc.cluster, layout, "ring");
  REQUIRE(p.fits);
  CHECK(p.expert_comm_s > 0);
  CHECK(p.bottleneck.rfind("compute", 0) == 0);
  const double parts =
      p.compute_s + p.tensor_comm_s + p.expert_comm_s + p.bubble_s + p.data_exposed_s + p.input_stall_s + p.optimizer_s;
  CHECK(parts == Approx(p.step_s).epsilon(1e-6));

  // what one rank holds: 1/8 of every MoE layer's experts
  double expert_total = 0;  // (summed here, not by the code under test)
  int moe_layers = 0;
  for (const Layer& l : sc.setup.model.layers) {
    if (!expert_layer(l)) continue;
    expert_total += l.params;
    ++moe_layers;
    CHECK(l.experts == 8);
    CHECK(l.dispatch_values == 4096.0 * 2 * 4096);  // tokens x top_k x hidden
  }
  REQUIRE(moe_layers == 32);
  ParallelLayout one = layout;
  one.expert = 1;
  const double value = gradient_bytes_per_param(sc.setup.compute.precision);
  const MemoryUse split = parallel_memory(sc.setup, layout, 1, 0);
  const MemoryUse whole = parallel_memory(sc.setup, one, 1, 0);
  CHECK(whole.weights_bytes - split.weights_bytes == Approx(expert_total * 7.0 / 8.0 * value));
  // ZeRO-1: dense optimizer states over the 64 replicas, the experts' over the 8 that hold the same experts
  const double state = optimizer_state_bytes_per_param(sc.setup.compute.optimizer, sc.setup.compute.precision);
  const double dense = sc.setup.model.params() - expert_total;
  CHECK(split.optimizer_bytes == Approx((dense / 64 + expert_total / 8 / 8) * state));

  // the volumes: 4 all-to-alls per MoE layer of 7/8 of a micro-batch's tokens x top_k x hidden values; the experts'
  // gradients reduced over 64 / 8 replicas, the rest over 64
  const CommVolume v = comm_volume(sc.setup, layout, 1, 0);
  CHECK(v.expert_bytes == Approx(32 * 4 * 7.0 / 8.0 * 4096.0 * 2 * 4096 * value));
  CHECK(v.data_bytes == Approx(2 * 63.0 / 64 * dense * value + 2 * 7.0 / 8 * expert_total / 8 * value));
  CHECK(comm_volume(sc.setup, one, 1, 0).expert_bytes == 0);

  // without expert parallelism (memory set aside): no all-to-all, the experts' compute unchanged
  TrainingSetup roomy = sc.setup;
  roomy.device.memory_bytes = 1e15;
  const ParallelPrediction replicated = predict_parallel(roomy, sc.cluster, one, "ring");
  REQUIRE(replicated.fits);
  CHECK(replicated.expert_comm_s == 0);
  CHECK(replicated.compute_s == Approx(p.compute_s).epsilon(1e-9));
  // ZeRO-1 updates 1/64 of all states either way (the experts' 1/8 of an eighth of them)
  CHECK(replicated.optimizer_s == Approx(p.optimizer_s).epsilon(1e-9));
  // every replica reduces all experts' gradients over 64 ranks instead of 1/8 of them over 8
  CHECK(replicated.data_comm_s > 2 * p.data_comm_s);

  // groups of 8 replicas of 2 tensor ranks span two nodes: the all-to-alls cross the NICs
  ParallelLayout across = layout;
  across.tensor = 2;
  across.data = 32;
  const ParallelPrediction crossing = predict_parallel(sc.setup, sc.cluster, across, "ring");
  REQUIRE(crossing.fits);
  CHECK(crossing.expert_comm_s > 2 * p.expert_comm_s);
}

TEST_CASE("expert parallelism refuses layouts it cannot split, naming parallel.expert") {
  const Scenario sc = scenario("mixtral-8x7b-ep");
  ParallelLayout layout = sc.parallel->layout(64);
  const auto refused = [&](const ParallelLayout& l, const TrainingSetup& setup, const std::string& why) {
    CAPTURE(why);
    try {
      predict_parallel(setup, sc.cluster, l, "ring");
      FAIL("not refused");
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(e.what(), Catch::Contains("parallel.expert: " + why));
    }
  };
  ParallelLayout three = layout;
  three.expert = 3;
  three.data = 63;
  refused(three, sc.setup, "blocks.0.experts's 8 experts do not split over 3 ranks");
  ParallelLayout sixteen = layout;
  sixteen.expert = 16;
  refused(sixteen, sc.setup, "blocks.0.experts's 8 experts do not split over 16 ranks");
  ParallelLayout uneven = layout;
  uneven.data = 12;
  refused(uneven, sc.setup, "8 expert-parallel ranks do not divide the 12 data-parallel replicas");
  ParallelLayout zero3 = layout;
  zero3.sharding = Sharding::zero3;
  refused(zero3, sc.setup, "expert parallelism with zero3 is not modelled");
  TrainingSetup dense = sc.setup;
  dense.model = load_named_model("gpt2-xl", ".", DTSIM_SOURCE_DIR);
  refused(layout, dense, "model gpt2-xl has no MoE layers");
}

TEST_CASE("a transport on the processor that computes: both slow while they overlap, as the rank's fluid model says") {
  // 2 ranks on a star of 1 MB/s links without latency: the ring over 2 MB moves 1 MB each way in 2 s. Forward 1 s;
  // backward: layer 1 (2 s), then layer 0 (1 s); the one bucket is ready after layer 1, at 3 s.
  FlowOptions o = star(1e6);
  o.cost.reduce_Bps = 1e18;
  TrainingProgram program;
  program.forward_s = {0.5, 0.5};
  program.backward_s = {1.0, 2.0};
  program.optimizer_s = 0;
  program.bucket_ready_after = {1};
  program.buckets.push_back(find_algorithm("ring").build(2, 2000000, AlgorithmOptions{}));
  const TrainingResult plain = run_flow_training(program, 2, o);
  CHECK(plain.step_s == Approx(5.0));  // the ring from 3 s to 5 s, the backward done at 4 s
  CHECK(plain.exposed_comm_s == Approx(1.0));

  SECTION("both at half speed: layer 0 takes 2 s, half the bucket drains meanwhile, the rest after") {
    program.bucket_wire_s = {2.0};
    program.compute_rate_while_transporting = 0.5;
    program.transport_rate_while_computing = 0.5;
    const TrainingResult shared = run_flow_training(program, 2, o);
    // backward ends at 5 s with 1 s of the wire left: the ring runs as if it had started at 4 s, ending at 6 s
    CHECK(shared.step_s == Approx(6.0));
    CHECK(shared.exposed_comm_s == Approx(1.0));
    CHECK(shared.forward_s + shared.backward_s == Approx(5.0));  // the computes' 4 s took 5 s
  }
  SECTION("only the compute slowed: the transport keeps its rate and the ring its time") {
    program.bucket_wire_s = {2.0};
    program.compute_rate_while_transporting = 0.5;
    const TrainingResult shared = run_flow_training(program, 2, o);
    CHECK(shared.step_s == Approx(5.0));
    CHECK(shared.exposed_comm_s == Approx(0.0).margin(1e-9));
  }
  SECTION("only the transport slowed: the computes keep theirs and the ring starts later") {
    program.bucket_wire_s = {2.0};
    program.transport_rate_while_computing = 0.25;
    const TrainingResult shared = run_flow_training(program, 2, o);
    // 0.25 s of the wire drained in layer 0's second, 1.75 s after it: the ring ends at 5.75 s
    CHECK(shared.step_s == Approx(5.75));
    CHECK(shared.forward_s + shared.backward_s == Approx(4.0));
  }
  SECTION("rates of 1 change nothing, and rates out of (0, 1] are refused") {
    program.bucket_wire_s = {2.0};
    CHECK(run_flow_training(program, 2, o).step_s == Approx(5.0));
    program.transport_rate_while_computing = 0;
    CHECK_THROWS_AS(run_flow_training(program, 2, o), std::invalid_argument);
  }
}

TEST_CASE("a rank's bytes sent and received are counted over every repetition of a compact schedule") {
  for (const int ranks : {2, 3, 8}) {
    CAPTURE(ranks);
    const std::uint64_t bytes = 8000000;
    const Schedule ring = find_algorithm("ring").build(ranks, bytes, AlgorithmOptions{});
    if (ranks == 8) REQUIRE(ring.compact());  // (a step repeated: counted without writing it out)
    const RankTraffic t = rank_traffic(ring, 1);
    const double expected = 2.0 * (ranks - 1) / ranks * static_cast<double>(bytes);
    CHECK(static_cast<double>(t.sent_bytes) == Approx(expected).epsilon(1e-6));
    CHECK(t.received_bytes == t.sent_bytes);
    const RankTraffic written_out = rank_traffic(expand(ring), 1);
    CHECK(written_out.sent_bytes == t.sent_bytes);
    CHECK(written_out.received_bytes == t.received_bytes);
  }
}

TEST_CASE("a cluster whose transport shares the processor predicts a slower step, and rates of 1 the same one") {
  Scenario sc = scenario("resnet50-v100");
  sc.cluster = load_cluster_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/clusters/cpu-10gbe.json");
  StepRequest request;
  request.accelerators = 8;
  request.algorithm = "ring";
  const double plain = simulate_step(sc.setup, sc.cluster, request).step_s();
  sc.cluster.node.transport_rate_while_computing = 1;
  sc.cluster.node.compute_rate_while_transporting = 1;
  CHECK(simulate_step(sc.setup, sc.cluster, request).step_s() == plain);
  sc.cluster.node.compute_rate_while_transporting = 0.5;
  sc.cluster.node.transport_rate_while_computing = 0.5;
  const double shared = simulate_step(sc.setup, sc.cluster, request).step_s();
  CHECK(shared > plain * 1.001);
  // never slower than computing and then moving every bucket at line rate: the computes at half speed at most double
  CHECK(shared < 2 * plain);
}

TEST_CASE("a long prediction reports the fraction of its reductions simulated, rising to all of them") {
  const Scenario sc = scenario("resnet50-v100");
  StepRequest request;
  request.accelerators = 64;
  request.algorithm = "ring";
  request.backend = Backend::flow;
  std::vector<double> seen;
  request.progress = [&](double fraction) { seen.push_back(fraction); };
  const double with = simulate_step(sc.setup, sc.cluster, request).step_s();
  REQUIRE(seen.size() >= 2);
  CHECK(std::is_sorted(seen.begin(), seen.end()));
  CHECK(seen.front() > 0);
  CHECK(seen.back() == Approx(1.0));
  request.progress = nullptr;
  CHECK(simulate_step(sc.setup, sc.cluster, request).step_s() == with);  // reporting changes nothing
}

TEST_CASE("a layout's gradient buckets share the processor with the computes as plain data parallelism's do") {
  Scenario sc = scenario("gpt2-xl-3d");
  StepRequest request;
  request.accelerators = 64;
  request.algorithm = "ring";
  request.layout = sc.parallel->layout(64);
  const double plain = simulate_step(sc.setup, sc.cluster, request).step_s();
  sc.cluster.node.compute_rate_while_transporting = 0.5;
  sc.cluster.node.transport_rate_while_computing = 0.5;
  const double shared = simulate_step(sc.setup, sc.cluster, request).step_s();
  CHECK(shared > plain);
  CHECK(shared < 2 * plain);
}

TEST_CASE("tensor parallelism splits a language model's vocabulary and each rank's attention scores") {
  const Model llama = load_named_model("llama-3-8b", ".", DTSIM_SOURCE_DIR);
  const Model split = stage_model(llama, {0, llama.layers.size()}, 8);
  REQUIRE(split.layers.size() == llama.layers.size());
  const Layer& embedding = llama.layers.front();
  const Layer& head = llama.layers.back();
  REQUIRE(embedding.name == "embeddings");
  REQUIRE(head.kind == LayerKind::lm_head);
  // the token table's rows and the output layer's columns (128,256 x 4096 each), 1/8 on each of 8 ranks; the logits too
  CHECK(split.layers.front().params == Approx(embedding.params / 8));
  CHECK(split.layers.back().params == Approx(head.params / 8));
  CHECK(split.layers.back().forward_flops == Approx(head.forward_flops / 8));
  CHECK(split.layers.back().activation_bytes == Approx(head.activation_bytes / 8));
  CHECK(split.params() == Approx(llama.params() / 8).epsilon(0.001));  // (the norms alone stay whole)
  // a block's scores: each rank holds its heads'
  const Layer& attention = llama.layers[1];
  REQUIRE(attention.kind == LayerKind::attention);
  CHECK(split.layers[1].score_bytes == Approx(attention.score_bytes / 8));
  CHECK(split.layers[1].score_flops == Approx(attention.score_flops / 8));
  CHECK(split.layers[1].op_recompute_flops == Approx(attention.op_recompute_flops / 8));
  // and a model without a vocabulary (a CNN) is left whole outside its transformer layers
  const Model resnet = load_named_model("resnet50", ".", DTSIM_SOURCE_DIR);
  CHECK(stage_model(resnet, {0, resnet.layers.size()}, 4).params() == Approx(resnet.params()));
}

TEST_CASE("gradients reduced in fp32 under 16-bit training: buckets of 4 bytes a parameter, ZeRO-3 gathers of 2") {
  Scenario sc = scenario("gpt2-xl-3d");
  REQUIRE(gradient_bytes_per_param(sc.setup.compute.precision) == 2);  // fp16
  const double params = sc.setup.model.params();
  auto bucket_total = [](const TrainingSetup& s) {
    double total = 0;
    for (const GradientBucket& b : gradient_buckets(s))
      total += static_cast<double>(b.bytes);
    return total;
  };
  CHECK(bucket_total(sc.setup) == Approx(2 * params).epsilon(1e-6));
  TrainingSetup fp32 = sc.setup;
  fp32.reduce_precision = Precision::fp32;
  CHECK(reduce_bytes_per_param(fp32) == 4);
  CHECK(bucket_total(fp32) == Approx(4 * params).epsilon(1e-6));
  // ZeRO-3: the gradients reduce-scattered in fp32, the parameters allgathered twice in 16 bits
  ParallelLayout z3 = sc.parallel->layout(1024);
  z3.sharding = Sharding::zero3;
  const auto ranges = split_stages(sc.setup.model, z3.pipeline, z3.tensor);
  const Model m0 = stage_model(sc.setup.model, ranges[0], z3.tensor);
  const auto elements = static_cast<std::uint64_t>(std::llround(m0.params() / 4)) * 4;
  const double counted = bytes_sent_by(ring_reduce_scatter(z3.data, 4 * elements), 0) +
                         2 * bytes_sent_by(ring_allgather(z3.data, 2 * elements), 0);
  CHECK(comm_volume(fp32, z3, 32, 0).data_bytes == Approx(counted).epsilon(1e-6));
  CHECK(comm_volume(fp32, z3, 32, 0).data_bytes > comm_volume(sc.setup, z3, 32, 0).data_bytes);
  // a plain allreduce moves the fp32 gradients both ways
  ParallelLayout ddp = sc.parallel->layout(1024);
  CHECK(comm_volume(fp32, ddp, 32, 0).data_bytes == Approx(2 * comm_volume(sc.setup, ddp, 32, 0).data_bytes));
  // and a step whose reductions are exposed takes longer with twice the bytes
  ParallelLayout layout;
  layout.data = 16;
  layout.sharding = Sharding::zero3;
  const ParallelPrediction narrow = predict_parallel(sc.setup, sc.cluster, layout, "ring");
  const ParallelPrediction wide = predict_parallel(fp32, sc.cluster, layout, "ring");
  CHECK(wide.data_exposed_s > narrow.data_exposed_s);
  CHECK(wide.compute_s == Approx(narrow.compute_s).epsilon(1e-12));
}

TEST_CASE("a scenario's framework.reduce_precision: read, and refused outside its choices with its JSON path") {
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/training/";
  nlohmann::json doc = read_json_file(dir + "llama-3-8b-fsdp-h100.json");
  CHECK(parse_scenario(doc, dir, DTSIM_SOURCE_DIR).setup.reduce_precision == Precision::fp32);
  doc["scenario"]["framework"].erase("reduce_precision");
  CHECK_FALSE(parse_scenario(doc, dir, DTSIM_SOURCE_DIR).setup.reduce_precision.has_value());
  doc["scenario"]["framework"]["reduce_precision"] = "bf16";
  CHECK(parse_scenario(doc, dir, DTSIM_SOURCE_DIR).setup.reduce_precision == Precision::bf16);
  doc["scenario"]["framework"]["reduce_precision"] = "fp64";
  CHECK_THROWS_WITH(parse_scenario(doc, dir, DTSIM_SOURCE_DIR),
                    Catch::Contains("scenario.framework.reduce_precision") && Catch::Contains("\"fp32\""));
}

TEST_CASE("asynchronous tensor parallelism: a split layer's collective runs under its projections' products") {
  // the overlap a layer offers: its products less the first of T chunks, never more than the pass
  CHECK(tensor_overlap_fraction(8e-3, 10e-3, 1) == 0);
  CHECK(tensor_overlap_fraction(8e-3, 10e-3, 4) == Approx(0.6));
  CHECK(tensor_overlap_fraction(8e-3, 0, 4) == 0);
  CHECK(tensor_overlap_fraction(20e-3, 10e-3, 8) == 1);
  // the products are what forward_seconds computes for them, less attention's score products
  const Model llama = load_named_model("llama-3-8b", ".", DTSIM_SOURCE_DIR);
  const Layer& attention = llama.layers[1];
  REQUIRE(attention.kind == LayerKind::attention);
  const Device h100 = load_named_device("h100-sxm5-80gb", ".", DTSIM_SOURCE_DIR);
  ComputeSettings bf16;
  bf16.precision = Precision::bf16;
  const double products = projection_seconds(attention, 2, h100, bf16, true);
  CHECK(products > 0);
  CHECK(products < forward_seconds(attention, 2, h100, bf16));
  CHECK(projection_seconds(attention, 4, h100, bf16, true) > products);
  CHECK(projection_seconds(attention, 2, h100, bf16, false) == Approx(attention.backward_flop_factor * products));

  const Scenario sc = scenario("gpt2-xl-3d");
  ParallelLayout layout = sc.parallel->layout(64);  // 4 d x 4 t x 4 p on 8 nodes
  const ParallelPrediction sync = predict_parallel(sc.setup, sc.cluster, layout, "ring");
  layout.async_tensor = true;
  CHECK(layout.describe().find("async tensor") != std::string::npos);
  const ParallelPrediction async = predict_parallel(sc.setup, sc.cluster, layout, "ring");
  REQUIRE(sync.tensor_comm_s > 0);
  CHECK(async.compute_s == Approx(sync.compute_s).epsilon(1e-12));
  CHECK(async.tensor_comm_s < sync.tensor_comm_s);
  CHECK(async.step_s < sync.step_s);
  // it hides at most what the products of a stage's split layers offer, per micro-batch, forward and backward
  const auto ranges = split_stages(sc.setup.model, layout.pipeline, layout.tensor);
  const int micro_batch = replica_batch(sc.setup, layout) / layout.micro_batches;
  double capacity = 0;
  for (const auto& range : ranges) {
    const Model stage = stage_model(sc.setup.model, range, layout.tensor);
    double stage_capacity = 0;
    for (const Layer& l : stage.layers) {
      if (!tensor_split(l)) continue;
      stage_capacity += 2 * projection_seconds(l, micro_batch, sc.setup.device, sc.setup.compute, true);
    }
    capacity = std::max(capacity, stage_capacity * layout.micro_batches);
  }
  CHECK(sync.tensor_comm_s - async.tensor_comm_s <= capacity * (1 + 1e-9));
  // a layout without tensor parallelism has nothing to overlap
  ParallelLayout flat = sc.parallel->layout(64);
  flat.tensor = 1;
  flat.data = 16;
  flat.micro_batches = 4;
  const ParallelPrediction plain = predict_parallel(sc.setup, sc.cluster, flat, "ring");
  flat.async_tensor = true;
  CHECK(predict_parallel(sc.setup, sc.cluster, flat, "ring").step_s == Approx(plain.step_s).epsilon(1e-12));
}

TEST_CASE("a scenario's parallel.async_tensor: read, and refused without tensor parallelism with its JSON path") {
  const std::string dir = std::string(DTSIM_SOURCE_DIR) + "/scenarios/training/";
  nlohmann::json doc = read_json_file(dir + "gpt2-xl-3d.json");
  CHECK_FALSE(parse_scenario(doc, dir, DTSIM_SOURCE_DIR).parallel->async_tensor);
  doc["scenario"]["parallel"]["async_tensor"] = "true";
  CHECK(parse_scenario(doc, dir, DTSIM_SOURCE_DIR).parallel->async_tensor);
  doc["scenario"]["parallel"]["async_tensor"] = "yes";
  CHECK_THROWS_WITH(parse_scenario(doc, dir, DTSIM_SOURCE_DIR),
                    Catch::Contains("scenario.parallel.async_tensor") && Catch::Contains("true"));
  doc["scenario"]["parallel"]["async_tensor"] = "true";
  doc["scenario"]["parallel"]["tensor"] = 1;
  CHECK_THROWS_WITH(parse_scenario(doc, dir, DTSIM_SOURCE_DIR),
                    Catch::Contains("scenario.parallel.async_tensor") && Catch::Contains("tensor > 1"));
}
