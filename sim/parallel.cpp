#include "sim/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "algorithms/direct.hpp"
#include "algorithms/hierarchical.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "models/alpha_beta.hpp"
#include "models/compute_model.hpp"
#include "models/devices.hpp"
#include "sim/algorithm_choice.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/percent_text.hpp"
#include "sim/predict.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/step_program.hpp"
#include "sim/topology.hpp"

namespace dtsim {

namespace {

// The accelerator of (replica r, stage p, tensor rank t), r = d C + c counting the context ranks c of each
// data-parallel replica d among the replicas gradients are reduced over: tensor ranks fill a node first, then context
// ranks (as torchtitan's device mesh places cp next to tp), then stages, then data-parallel replicas.
int accelerator_of(const ParallelLayout& l, int r, int p, int t) {
  const int d = r / l.context, c = r % l.context;
  return ((d * l.pipeline + p) * l.context + c) * l.tensor + t;
}

// The network of a layout's data-parallel synchronisation: rank g * D + d is replica d of group g (stage p, tensor
// rank t: g = p T + t), placed where the layout puts it, and the algorithm's options for groups of D ranks.
// The algorithm options of groups of `members` ranks, `ranks_per_node` of them on each of their nodes: a parameter
// server shard per node on its first rank of the group, colocated; the hierarchical allreduce's ranks per node.
AlgorithmOptions group_options(int members, std::uint32_t ranks_per_node, std::uint32_t servers) {
  AlgorithmOptions options;
  servers = std::clamp<std::uint32_t>(servers, 1, static_cast<std::uint32_t>(members));
  options.set(ps_servers_option.name, std::uint64_t{servers});
  options.set(ps_placement_option.name, "colocated");
  options.set(ranks_per_node_option.name, std::uint64_t{ranks_per_node});
  if (static_cast<std::uint64_t>(servers - 1) * ranks_per_node < static_cast<std::uint64_t>(members))
    options.set(ps_server_stride_option.name, std::uint64_t{ranks_per_node});
  return options;
}

struct LayoutNetwork {
  std::unique_ptr<Topology> topology;
  SimGridOptions sg;
  AlgorithmOptions options;         // groups of the D replicas
  AlgorithmOptions expert_options;  // groups of the D/E replicas that hold the same experts

  LayoutNetwork(const TrainingSetup& setup, const ClusterSpec& cluster, const ParallelLayout& layout) {
    const int per_node = cluster.node.accelerators;
    const int accelerators = layout.accelerators();
    const int nodes = (accelerators + per_node - 1) / per_node;
    const int groups = layout.tensor * layout.pipeline;
    const int R = layout.replicas();
    auto servers = static_cast<std::uint32_t>(std::max(1, nodes / std::max(1, groups)));
    std::uint32_t ranks_per_node = 1;  // a group has at most one accelerator per node when T x P fills the node
    if (groups == 1) {
      servers = static_cast<std::uint32_t>(nodes);
      ranks_per_node = static_cast<std::uint32_t>(accelerators % per_node == 0 ? per_node : accelerators);
    } else if (per_node > groups && per_node % groups == 0) {
      ranks_per_node = static_cast<std::uint32_t>(per_node / groups);
    }
    if (layout.context > 1) {  // the members of a group on its first node (context ranks lie T apart, replicas C T P)
      ranks_per_node = 0;
      for (int r = 0; r < R && accelerator_of(layout, r, 0, 0) < per_node; ++r)
        ++ranks_per_node;
    }
    options = group_options(R, ranks_per_node, servers);
    // every E-th replica: E consecutive replicas share a node's ranks of the group first
    const auto e = static_cast<std::uint32_t>(layout.expert);
    expert_options = group_options(layout.data / layout.expert, ranks_per_node % e == 0 ? ranks_per_node / e : 1,
                                   std::max(1U, servers / e));
    ClusterSpec spec = cluster;
    spec.nodes = nodes;
    topology = std::make_unique<Topology>(spec);
    sg.topology = topology.get();
    sg.cost.reduce_Bps = cluster.node.reduce_Bps;
    sg.factors = setup.network_factors;
    sg.library = cluster.library;
    sg.accelerator_of.resize(static_cast<std::size_t>(accelerators));
    for (int p = 0; p < layout.pipeline; ++p) {
      for (int t = 0; t < layout.tensor; ++t) {
        const int g = p * layout.tensor + t;
        for (int r = 0; r < R; ++r)
          sg.accelerator_of[static_cast<std::size_t>(g * R + r)] = accelerator_of(layout, r, p, t);
      }
    }
  }
};

// Rank numbering of a layout: rank (d, p, t) runs on accelerator accelerator_of(layout, d, p, t), and its number is
// that accelerator's.
// The units of a group of ranks on `stream`, in the group's order.
template <typename RankOf>
std::vector<int> group_units(const StepProgram& program, Stream stream, int groups, int size, RankOf rank_of) {
  std::vector<int> units;
  units.reserve(static_cast<std::size_t>(groups) * static_cast<std::size_t>(size));
  for (int g = 0; g < groups; ++g) {
    for (int i = 0; i < size; ++i)
      units.push_back(program.unit(rank_of(g, i), stream));
  }
  return units;
}

// The step program of a layout: every stage's layers (at 1/T of their work, timed for one micro-batch), each
// tensor-split layer's allreduce over the stage's T tensor ranks, the stage's gradient buckets reduced over its D
// replicas (ZeRO-3: reduce-scattered, and each bucket's parameters allgathered), and at each stage boundary the
// activations (forward) and their gradients (backward), 1/T of them between each pair of tensor ranks.
StepProgram layout_program(const TrainingSetup& setup, const ParallelLayout& layout, int replica_batch,
                           const std::string& algorithm, const LayoutNetwork& net, int per_node) {
  // (D: the replicas gradients are reduced over, the data-parallel ones' context ranks counted: layout.replicas())
  const int D = layout.replicas(), T = layout.tensor, P = layout.pipeline, C = layout.context;
  const int micro_batch = replica_batch / layout.micro_batches;
  const double value = gradient_bytes_per_param(setup.compute.precision);
  const bool zero3 = layout.sharding == Sharding::zero3 && D > 1;
  StepProgram program;
  program.ranks = layout.accelerators();
  program.micro_batches = layout.micro_batches;
  program.schedule = layout.schedule;
  program.gather_prefetch = layout.prefetch;
  program.stage_of.resize(static_cast<std::size_t>(program.ranks));
  for (int d = 0; d < D; ++d) {
    for (int p = 0; p < P; ++p) {
      for (int t = 0; t < T; ++t)
        program.stage_of[static_cast<std::size_t>(accelerator_of(layout, d, p, t))] = p;
    }
  }
  if (T > 1 || layout.expert > 1 || C > 1) program.use_stream(Stream::compute);
  if (P > 1) {
    for (Stream s : {Stream::send_forward, Stream::send_backward, Stream::receive_forward, Stream::receive_backward})
      program.use_stream(s);
  }
  program.use_stream(Stream::reduce);
  if (zero3) program.use_stream(Stream::gather);

  // A segment per size of each kind of collective, laid over every group of its ranks: `build` makes it the first
  // time a size is asked for.
  const auto segment_for = [&](std::map<std::uint64_t, std::int32_t>& cache, std::uint64_t bytes, auto build) {
    auto [it, added] = cache.try_emplace(bytes, no_segment);
    if (added) it->second = static_cast<std::int32_t>(program.add_segment(build()));
    return it->second;
  };
  // the groups of K consecutive replicas (replicas j K to j K + K - 1) at each stage and tensor rank: expert
  // parallelism's (K = E) and context parallelism's (K = C)
  const auto replica_groups = [&](int K) {
    return group_units(program, Stream::compute, D / K * P * T, K, [&](int g, int i) {
      const int t = g % T, p = g / T % P, j = g / (T * P);
      return accelerator_of(layout, j * K + i, p, t);
    });
  };
  // expert parallelism's all-to-alls: each rank sends 1/E of its tokens' values to each rank of its group (the
  // Schedule's buffer is the whole E x E matrix of blocks: E times what each rank sends)
  const int E = layout.expert;
  std::map<std::uint64_t, std::int32_t> expert_segment;
  auto expert_alltoall = [&](std::uint64_t bytes_per_rank) {
    return segment_for(expert_segment, bytes_per_rank, [&] {
      const Schedule a2a = direct_alltoall(E, bytes_per_rank * static_cast<std::uint64_t>(E), net.options);
      return place_groups(a2a, replica_groups(E), program.units);
    });
  };
  // tensor-parallel allreduces over every (replica, stage) group's tensor ranks: a ring of T <= 8 is small written
  // out, and its repetitions then never wait for rounds shared with other stages' rings (segment_rounds)
  std::map<std::uint64_t, std::int32_t> tensor_segment;
  auto tensor_allreduce = [&](std::uint64_t bytes) {
    return segment_for(tensor_segment, bytes, [&] {
      const Schedule ring = expand(ring_allreduce(T, bytes, net.options));
      const std::vector<int> units = group_units(program, Stream::compute, D * P, T,
                                                 [&](int g, int t) { return accelerator_of(layout, g / P, g % P, t); });
      return place_groups(ring, units, program.units);
    });
  };
  // context parallelism's exchanges of keys and values over each group of C context ranks: an all-gather of C x
  // each rank's bytes
  std::map<std::uint64_t, std::int32_t> context_segment;
  auto context_allgather = [&](std::uint64_t bytes_per_rank) {
    return segment_for(context_segment, bytes_per_rank, [&] {
      const Schedule gather = ring_allgather(C, bytes_per_rank * static_cast<std::uint64_t>(C), net.options);
      return place_groups(gather, replica_groups(C), program.units);
    });
  };
  const auto ranges = split_stages(setup.model, P, T);
  for (int p = 0; p < P; ++p) {
    const auto range = ranges[static_cast<std::size_t>(p)];
    TrainingSetup stage_setup = setup;
    stage_setup.model = stage_model(setup.model, range, T, E, C);
    const TrainingProgram local = make_program(stage_setup, D, micro_batch, algorithm, net.options, per_node);
    StageStep stage;
    std::vector<std::size_t> step_of_layer;  // the stage's LayerStep of each of its layers
    for (std::size_t l = 0; l < local.forward_s.size(); ++l) {
      LayerStep layer{local.forward_s[l], local.backward_s[l], no_segment};
      const Layer& model_layer = stage_setup.model.layers[l];
      if (C > 1 && model_layer.kv_values > 0) {
        // the other context ranks' keys and values, gathered before the layer in forward; their gradients sent back
        // after it in backward (the same chain of waits, as a step of its own)
        LayerStep kv{
            0, 0,
            context_allgather(static_cast<std::uint64_t>(std::llround(micro_batch * model_layer.kv_values * value)))};
        kv.context = true;
        stage.layers.push_back(kv);
      }
      if (T > 1 && tensor_split(model_layer)) {
        layer.tensor_segment = tensor_allreduce(
            static_cast<std::uint64_t>(std::llround(micro_batch * model_layer.tensor_parallel_values * value)));
        if (layout.async_tensor) {
          // forward: the projections' products; backward: their input gradients' (as many FLOPs), which the
          // collectives feed or are fed by (the weight gradients' products are not beside them)
          const double products = projection_seconds(model_layer, micro_batch, setup.device, setup.compute, true);
          layer.forward_overlap = tensor_overlap_fraction(products, layer.forward_s, T);
          layer.backward_overlap = tensor_overlap_fraction(products, layer.backward_s, T);
        }
      }
      step_of_layer.push_back(stage.layers.size());
      stage.layers.push_back(layer);
      if (E > 1 && expert_layer(model_layer)) {
        // dispatch and combine: two all-to-alls the layer waits for in forward and again in backward (as steps of
        // their own after the experts' compute: the same chain of waits, the compute one wait earlier)
        LayerStep a2a{0, 0,
                      expert_alltoall(static_cast<std::uint64_t>(
                          std::llround(micro_batch * model_layer.dispatch_values * value / T)))};
        a2a.expert = true;
        stage.layers.push_back(a2a);
        stage.layers.push_back(a2a);
      }
    }
    stage.optimizer_s = local.optimizer_s;
    if (layout.sharding != Sharding::none) {
      // 1/D of all states (the experts': 1/(D/E) of the 1/E held here); the update's launch and the step's framework
      // cost are paid whole by every rank
      const double fixed = optimizer_seconds(0, setup.device, setup.compute);
      const double all = optimizer_seconds(stage_setup.model.params() + expert_params(stage_setup.model) * (E - 1),
                                           setup.device, setup.compute, stage_setup.model.param_tensors());
      stage.optimizer_s = fixed + (all - fixed) / D;
    }
    if (p == 0) {
      program.steps = setup.input.enabled ? local.steps : 1;   // without an input pipeline no step differs
      program.batch_s = local.batch_s * layout.micro_batches;  // the loader prepares the replica's whole batch
      program.prefetch = local.prefetch;
      program.overlap = local.overlap;
      program.fusion_cycle_s = local.fusion_cycle_s;
    }
    // the stage's gradient buckets over its D replicas, for each of its tensor ranks; with expert parallelism the
    // experts' gradients in buckets of their own over the D/E replicas holding the same experts, each list in the
    // order its buckets become ready, the two merged in that order
    struct Bucket {
      std::size_t ready_after;
      std::size_t segment;
      std::int32_t gather = no_segment;
      double wire_s = 0;  // a replica's bytes of its reduction on its NIC at line rate (StageStep::bucket_wire_s)
    };
    const NodeSpec& node = net.topology->spec().node;
    const bool transport_shares = node.transport_shares_processor();
    std::vector<Bucket> dense;
    std::vector<Bucket> experts;
    const auto lay_buckets = [&](const TrainingProgram& from, int members, int groups, const AlgorithmOptions& options,
                                 auto rank_of, std::vector<Bucket>& into) {
      const std::vector<int> replicas = group_units(program, Stream::reduce, groups, members, rank_of);
      const std::vector<int> gatherers =
          zero3 ? group_units(program, Stream::gather, groups, members, rank_of) : std::vector<int>{};
      for (std::size_t b = 0; b < from.buckets.size(); ++b) {
        const Schedule& one = from.buckets[b];
        const Schedule reduce = zero3 ? ring_reduce_scatter(members, one.bytes, options) : one;
        Bucket bucket{step_of_layer[from.bucket_ready_after[b]],
                      program.add_segment(place_groups(reduce, replicas, program.units))};
        if (transport_shares) bucket.wire_s = bucket_wire_seconds(reduce, 1, members, node.nic.bandwidth_Bps);
        if (zero3) {  // the parameters, in the training precision whatever the gradients are reduced in
          const auto gathered = static_cast<std::uint64_t>(
              std::llround(static_cast<double>(one.bytes) * gradient_bytes_per_param(setup.compute.precision) /
                           reduce_bytes_per_param(setup)));
          bucket.gather = static_cast<std::int32_t>(
              program.add_segment(place_groups(ring_allgather(members, gathered, options), gatherers, program.units)));
        }
        into.push_back(bucket);
      }
    };
    const auto dense_rank = [&](int t, int d) { return accelerator_of(layout, d, p, t); };
    if (E == 1) {
      lay_buckets(local, D, T, net.options, dense_rank, dense);
    } else {
      TrainingSetup part = stage_setup;  // the dense parameters alone
      part.model = params_of(stage_setup.model, false);
      lay_buckets(make_program(part, D, micro_batch, algorithm, net.options, per_node), D, T, net.options, dense_rank,
                  dense);
      if (D / E > 1) {
        // the experts alone, over each group of D/E replicas (group g: tensor rank g / E, the (g % E)-th rank of
        // every expert group)
        part.model = params_of(stage_setup.model, true);
        lay_buckets(
            make_program(part, D / E, micro_batch, algorithm, net.expert_options, per_node), D / E, T * E,
            net.expert_options, [&](int g, int j) { return accelerator_of(layout, j * E + g % E, p, g / E); }, experts);
      }
    }
    std::vector<Bucket> buckets(dense.size() + experts.size());
    std::merge(dense.begin(), dense.end(), experts.begin(), experts.end(), buckets.begin(),
               [](const Bucket& a, const Bucket& b) { return a.ready_after > b.ready_after; });
    for (const Bucket& b : buckets) {
      stage.bucket_ready_after.push_back(b.ready_after);
      stage.bucket_segment.push_back(b.segment);
      if (zero3) stage.gather_segment.push_back(static_cast<std::size_t>(b.gather));
      if (transport_shares) stage.bucket_wire_s.push_back(b.wire_s);
    }
    if (transport_shares) {
      stage.compute_rate_while_transporting = node.compute_rate_while_transporting;
      stage.transport_rate_while_computing = node.transport_rate_while_computing;
    }
    program.stages.push_back(std::move(stage));
  }
  // pipeline boundaries: stage p's activations to stage p + 1, and their gradients back
  for (int p = 0; p + 1 < P; ++p) {
    const Layer& last = setup.model.layers[ranges[static_cast<std::size_t>(p)].second - 1];
    const auto bytes = static_cast<std::uint64_t>(
        std::llround(boundary_bytes_per_sample(last, setup.compute.precision) * micro_batch / T));
    std::vector<std::pair<int, int>> pairs;  // tensor rank t of stage p to tensor rank t of stage p + 1
    for (int d = 0; d < D; ++d) {
      for (int t = 0; t < T; ++t)
        pairs.emplace_back(accelerator_of(layout, d, p, t), accelerator_of(layout, d, p + 1, t));
    }
    program.connect_stages(p, pairs, bytes);
  }
  return program;
}

}  // namespace

int replica_batch(const TrainingSetup& setup, const ParallelLayout& layout) {
  if (setup.accumulation != 1) {
    throw std::invalid_argument(
        "batch.accumulation: not with a parallel layout (its micro-batches are parallel.micro_batches)");
  }
  if (setup.scaling == ScalingMode::weak) {  // batch x accelerators in all, shared by the D replicas
    const long long replica = static_cast<long long>(setup.batch) * layout.context * layout.tensor * layout.pipeline;
    if (replica > std::numeric_limits<int>::max()) {
      throw std::invalid_argument(
          "a replica's batch of " + std::to_string(replica) + " samples (batch " + std::to_string(setup.batch) + " x " +
          (layout.context > 1 ? std::to_string(layout.context) + " context x " : "") + std::to_string(layout.tensor) +
          " tensor x " + std::to_string(layout.pipeline) + " pipeline ranks) is too large: at most " +
          std::to_string(std::numeric_limits<int>::max()));
    }
    return static_cast<int>(replica);
  }
  if (setup.batch % layout.data != 0) {
    throw std::invalid_argument("a global batch of " + std::to_string(setup.batch) + " does not split evenly over " +
                                std::to_string(layout.data) + " replicas");
  }
  return setup.batch / layout.data;
}

ParallelPrediction predict_parallel(const TrainingSetup& setup, const ClusterSpec& cluster,
                                    const ParallelLayout& layout, const std::string& algorithm, bool record) {
  const auto started = std::chrono::steady_clock::now();
  const int per_node = cluster.node.accelerators;
  if (layout.data < 1 || layout.tensor < 1 || layout.pipeline < 1 || layout.micro_batches < 1 || layout.expert < 1 ||
      layout.context < 1) {
    throw std::invalid_argument("parallel: data, context, tensor, pipeline, micro_batches and expert must be >= 1");
  }
  if (!tensor_fits_nodes(layout.tensor, per_node)) {
    throw std::invalid_argument("parallel.tensor: " + std::to_string(layout.tensor) +
                                " must divide the accelerators of a node (" + std::to_string(per_node) +
                                ") or be a multiple of them (a tensor group of whole nodes)");
  }
  if (const std::string why = expert_layout_problem(setup.model, layout); !why.empty())
    throw std::invalid_argument("parallel.expert: " + why);
  if (const std::string why = context_layout_problem(setup.model, layout); !why.empty())
    throw std::invalid_argument("parallel.context: " + why);
  ParallelPrediction out;
  out.layout = layout;
  out.accelerators = layout.accelerators();
  out.nodes = (out.accelerators + per_node - 1) / per_node;
  out.replica_batch = replica_batch(setup, layout);
  out.global_batch = static_cast<long long>(out.replica_batch) * layout.data;
  if (out.replica_batch % layout.micro_batches != 0) {
    throw std::invalid_argument("parallel.micro_batches: a replica's batch of " + std::to_string(out.replica_batch) +
                                " does not split into " + std::to_string(layout.micro_batches) + " micro-batches");
  }
  out.micro_batch = static_cast<double>(out.replica_batch) / layout.micro_batches;
  const auto ranges = split_stages(setup.model, layout.pipeline, layout.tensor);
  for (int s = 0; s < layout.pipeline; ++s) {
    const MemoryUse use = parallel_memory(setup, layout, out.replica_batch, s);
    if (use.total_bytes() > out.memory.total_bytes()) out.memory = use;
  }
  out.volume = comm_volume(setup, layout, out.replica_batch, 0);
  if (out.memory.total_bytes() > setup.device.memory_bytes) {
    out.fits = false;
    char text[160];
    std::snprintf(text, sizeof text, "memory: needs %.1f GB per %s, has %.1f GB; not simulated",
                  out.memory.total_bytes() / 1e9, setup.device.name.c_str(), setup.device.memory_bytes / 1e9);
    out.bottleneck = text;
    return out;
  }

  // The step program: per stage its layers at 1/T (with their tensor-parallel allreduces), gradient buckets and
  // pipeline boundaries; every rank of a stage runs it, on the layout's network.
  // Layouts run on the flow engine at every size (docs/parallel.md: SimGrid runs the same program, at about 40x the
  // cost, within 0.31%).
  LayoutNetwork net(setup, cluster, layout);
  StepProgram program = layout_program(setup, layout, out.replica_batch, algorithm, net, per_node);
  FlowOptions network(static_cast<const NetworkCost&>(net.sg));
  network.accelerator_of.assign(static_cast<std::size_t>(program.units), 0);
  for (std::size_t k = 0; k < stream_count; ++k) {
    if (program.stream_base[k] < 0) continue;
    for (int r = 0; r < program.ranks; ++r)  // rank r runs on accelerator r (accelerator_of's numbering)
      network.accelerator_of[static_cast<std::size_t>(program.stream_base[k] + r)] = r;
  }
  // a collective library runs every segment in the protocol its tuner picks (one ring each: no channels yet)
  if (network.library.enabled()) {
    for (Schedule& segment : program.owned_segments)
      segment.protocol = tuned_protocol(network, segment);
  }
  RunTrace spans;
  const StepRun run = run_flow_step(program, network, record ? &spans : nullptr);

  // The breakdown of the slowest rank's step, as measured by the driver.
  const RankStep& last = run.slowest;
  out.simulated_stage = program.stage_of[static_cast<std::size_t>(run.slowest_rank)];
  out.step_s = last.step_s;
  out.samples_per_s = out.global_batch / out.step_s;
  out.compute_s = last.compute_s;
  out.tensor_comm_s = last.tensor_s;
  out.expert_comm_s = last.expert_s;
  out.context_comm_s = last.context_s;
  out.bubble_s = last.bubble_s;
  out.bubble_fraction = out.step_s > 0 ? out.bubble_s / out.step_s : 0;
  out.data_exposed_s = last.exposed_s + last.gather_wait_s;
  out.data_comm_s = last.reduce_s;
  out.input_stall_s = last.input_stall_s;
  out.optimizer_s = last.optimizer_s;
  if (record) {  // the pipeline of replica 0, context rank 0, tensor rank 0: one track per stage
    for (const SpanRecord& span : spans.spans) {
      const int d = span.rank / (layout.pipeline * layout.context * layout.tensor);
      const int c = span.rank / layout.tensor % layout.context;
      const int t = span.rank % layout.tensor;
      if (d != 0 || c != 0 || t != 0 || (span.kind != SpanKind::forward && span.kind != SpanKind::backward)) continue;
      SpanRecord stage_span = span;
      stage_span.rank = program.stage_of[static_cast<std::size_t>(span.rank)];
      out.pipeline_trace.spans.push_back(stage_span);
    }
  }
  const double parts[] = {out.compute_s, out.tensor_comm_s,  out.expert_comm_s, out.context_comm_s,
                          out.bubble_s,  out.data_exposed_s, out.input_stall_s};
  const char* names[] = {"compute",
                         "tensor-parallel allreduces",
                         "expert-parallel all-to-alls",
                         "context-parallel key and value exchanges",
                         "pipeline bubble",
                         "data-parallel communication",
                         "input pipeline"};
  const auto most = static_cast<std::size_t>(std::max_element(std::begin(parts), std::end(parts)) - std::begin(parts));
  out.bottleneck = std::string(names[most]) + ": " + percent(parts[most], out.step_s) + " of the step";
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

std::vector<ParallelLayout> candidate_layouts(const TrainingSetup& setup, const ClusterSpec& cluster,
                                              int accelerators) {
  std::vector<ParallelLayout> out;
  const int per_node = cluster.node.accelerators;
  const int layers = static_cast<int>(setup.model.layers.size());
  for (int t = 1; t <= per_node && t <= accelerators; t *= 2) {
    if (per_node % t != 0 || accelerators % t != 0) continue;
    for (int p = 1; p * t <= accelerators && p <= layers; p *= 2) {
      if (accelerators % (t * p) != 0) continue;
      ParallelLayout l;
      l.tensor = t;
      l.pipeline = p;
      l.data = accelerators / (t * p);
      if (setup.scaling == ScalingMode::strong && setup.batch % l.data != 0) continue;
      const int replica = replica_batch(setup, l);
      if (replica < 1) continue;
      l.micro_batches = 1;
      if (p > 1) {  // 4 micro-batches per stage where the batch allows, else as many as divide it
        for (int m = 4 * p; m >= 1; --m) {
          if (replica % m == 0) {
            l.micro_batches = m;
            break;
          }
        }
      }
      // MoE models: experts split 1, 2, 4, ... ways where the replicas and the experts allow
      for (int e = 1;; e *= 2) {
        l.expert = e;
        l.sharding = Sharding::none;
        if (e > 1 && !expert_layout_problem(setup.model, l).empty()) break;
        for (Sharding z : {Sharding::none, Sharding::zero1, Sharding::zero2, Sharding::zero3}) {
          if (z != Sharding::none && l.data == 1) break;
          l.sharding = z;
          if (e > 1 && !expert_layout_problem(setup.model, l).empty()) break;  // (zero3)
          double most = 0;
          for (int s = 0; s < p; ++s)
            most = std::max(most, parallel_memory(setup, l, replica, s).total_bytes());
          if (most <= setup.device.memory_bytes) {
            out.push_back(l);
            break;
          }
        }
      }
    }
  }
  return out;
}

LastBucket last_bucket_alone(const TrainingSetup& setup, const ClusterSpec& cluster, const ParallelLayout& layout,
                             const std::string& algorithm, int stage) {
  const int R = layout.replicas();  // (the context ranks reduce with the data-parallel replicas)
  if (R < 2) throw std::invalid_argument("last bucket: needs at least 2 data-parallel replicas");
  const auto ranges = split_stages(setup.model, layout.pipeline, layout.tensor);
  if (stage < 0 || stage >= layout.pipeline) throw std::invalid_argument("last bucket: no such stage");
  const auto range = ranges[static_cast<std::size_t>(stage)];
  TrainingSetup stage_setup = setup;
  stage_setup.model = stage_model(setup.model, range, layout.tensor, layout.expert, layout.context);
  if (layout.expert > 1)  // the experts' buckets are reduced apart, and the first layers' (the last) are dense
    stage_setup.model = params_of(stage_setup.model, false);
  const std::vector<GradientBucket> buckets = gradient_buckets(stage_setup);
  if (buckets.empty()) throw std::invalid_argument("last bucket: the stage has no parameters");
  const LayoutNetwork net(setup, cluster, layout);  // on the flow engine, as predict_parallel's step
  LastBucket out;
  out.bucket = buckets.back();
  out.bucket.first_layer += range.first;  // in the whole model's numbering
  out.bucket.last_layer += range.first;
  out.buckets = buckets.size();
  out.operation = layout.sharding == Sharding::zero3 ? "ring reduce-scatter" : algorithm + " allreduce";
  out.backend = Backend::flow;
  const Schedule one = layout.sharding == Sharding::zero3
                           ? ring_reduce_scatter(R, out.bucket.bytes, net.options)
                           : resolve_allreduce(algorithm, R, out.bucket.bytes, net.options, NetworkCost{})
                                 .algorithm->build(R, out.bucket.bytes, net.options);
  Schedule all = replicate_groups(one, layout.tensor * layout.pipeline);
  all.protocol = tuned_protocol(net.sg, all);  // (one ring, as the layout's step runs it)
  out.alone_s = run_flow(all, flow_options(net.sg)).time_s;
  return out;
}

}  // namespace dtsim
