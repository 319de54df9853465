#include "sim/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "algorithms/hierarchical.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/ring.hpp"
#include "models/alpha_beta.hpp"
#include "models/devices.hpp"
#include "sim/predict.hpp"
#include "sim/simgrid_executor.hpp"
#include "sim/topology.hpp"

namespace dtsim {

namespace {

struct PipeOp {
  bool forward;
  int micro_batch;
};

// Each stage's order of work: GPipe runs every forward, then every backward (last micro-batch first); 1F1B
// (PipeDream-Flush) runs P - s - 1 warm-up forwards, then alternates one forward and one backward, then drains.
std::vector<PipeOp> stage_order(int stage, int stages, int m, PipelineSchedule schedule) {
  std::vector<PipeOp> order;
  if (schedule == PipelineSchedule::gpipe) {
    for (int i = 0; i < m; ++i)
      order.push_back({true, i});
    for (int i = m; i-- > 0;)
      order.push_back({false, i});
    return order;
  }
  const int warm = std::min(stages - stage - 1, m);
  for (int i = 0; i < warm; ++i)
    order.push_back({true, i});
  for (int i = 0; i < m - warm; ++i) {
    order.push_back({true, warm + i});
    order.push_back({false, i});
  }
  for (int i = m - warm; i < m; ++i)
    order.push_back({false, i});
  return order;
}

// The accelerator of (replica d, stage p, tensor rank t): tensor ranks fill a node first, then stages, then replicas.
int accelerator_of(const ParallelLayout& l, int d, int p, int t) { return (d * l.pipeline + p) * l.tensor + t; }

// One message of `bytes` between two accelerators: over the node's own links when they share a node, else over the
// NIC (the fabric beyond is taken to keep up with one NIC's traffic).
double transfer_seconds(const ClusterSpec& c, int from, int to, double bytes) {
  const int per_node = c.node.accelerators;
  const bool same_node = from / per_node == to / per_node;
  LinkSpec link = c.node.nic;
  if (same_node) link = c.node.intra_kind == IntraKind::pcie ? c.node.pcie : c.node.intra;
  return link.latency_s + bytes / link.bandwidth_Bps;
}

AlphaBetaGamma intra_node_cost(const ClusterSpec& c) {
  const LinkSpec& link = c.node.intra_kind == IntraKind::pcie ? c.node.pcie : c.node.intra;
  AlphaBetaGamma cost;
  cost.alpha_s = link.latency_s;
  cost.bandwidth_Bps = link.bandwidth_Bps;
  cost.reduce_Bps = c.node.reduce_Bps;
  return cost;
}

std::string percent(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0);
  return text;
}

// The network of a layout's data-parallel synchronisation: rank g * D + d is replica d of group g (stage p, tensor
// rank t: g = p T + t), placed where the layout puts it, and the algorithm's options for groups of D ranks.
struct LayoutNetwork {
  std::unique_ptr<Topology> topology;
  SimGridOptions sg;
  AlgorithmOptions options;

  LayoutNetwork(const TrainingSetup& setup, const ClusterSpec& cluster, const ParallelLayout& layout) {
    const int per_node = cluster.node.accelerators;
    const int accelerators = layout.accelerators();
    const int nodes = (accelerators + per_node - 1) / per_node;
    const int groups = layout.tensor * layout.pipeline;
    auto servers = static_cast<std::uint32_t>(std::max(1, nodes / std::max(1, groups)));
    std::uint32_t ranks_per_node = 1;  // a group has at most one accelerator per node when T x P fills the node
    if (groups == 1) {
      servers = static_cast<std::uint32_t>(nodes);
      ranks_per_node = static_cast<std::uint32_t>(accelerators % per_node == 0 ? per_node : accelerators);
    } else if (per_node > groups && per_node % groups == 0) {
      ranks_per_node = static_cast<std::uint32_t>(per_node / groups);
    }
    options.set(ps_servers_option.name, std::uint64_t{servers});
    options.set(ps_placement_option.name, "colocated");
    options.set(ranks_per_node_option.name, std::uint64_t{ranks_per_node});
    // ps: one shard per node, on the node's first rank of the group
    if (static_cast<std::uint64_t>(servers - 1) * ranks_per_node < static_cast<std::uint64_t>(layout.data))
      options.set(ps_server_stride_option.name, std::uint64_t{ranks_per_node});
    ClusterSpec spec = cluster;
    spec.nodes = nodes;
    topology = std::make_unique<Topology>(spec);
    sg.topology = topology.get();
    sg.cost.reduce_Bps = cluster.node.reduce_Bps;
    sg.factors = setup.network_factors;
    sg.accelerator_of.resize(static_cast<std::size_t>(accelerators));
    for (int p = 0; p < layout.pipeline; ++p) {
      for (int t = 0; t < layout.tensor; ++t) {
        const int g = p * layout.tensor + t;
        for (int d = 0; d < layout.data; ++d)
          sg.accelerator_of[static_cast<std::size_t>(g * layout.data + d)] = accelerator_of(layout, d, p, t);
      }
    }
  }
};

}  // namespace

PipelineRun simulate_pipeline(std::span<const StageCost> stages, int micro_batches, PipelineSchedule schedule,
                              bool record) {
  const int p = static_cast<int>(stages.size());
  const int m = micro_batches;
  if (p < 1 || m < 1) throw std::invalid_argument("pipeline: needs at least one stage and one micro-batch");
  const auto index = [m](int s, int i) { return static_cast<std::size_t>(s) * static_cast<std::size_t>(m) + i; };
  constexpr double unknown = -1;
  std::vector<double> forward_end(static_cast<std::size_t>(p * m), unknown);
  std::vector<double> backward_end(static_cast<std::size_t>(p * m), unknown);
  std::vector<std::vector<PipeOp>> orders;
  for (int s = 0; s < p; ++s)
    orders.push_back(stage_order(s, p, m, schedule));
  std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
  std::vector<double> free_at(static_cast<std::size_t>(p), 0.0);
  PipelineRun run;
  run.last_backward_start_s.assign(static_cast<std::size_t>(p), 0.0);
  std::size_t left = static_cast<std::size_t>(2 * p * m);
  while (left > 0) {
    bool progress = false;
    for (int s = 0; s < p; ++s) {
      auto& at = next[static_cast<std::size_t>(s)];
      while (at < orders[static_cast<std::size_t>(s)].size()) {
        const PipeOp op = orders[static_cast<std::size_t>(s)][at];
        const StageCost& c = stages[static_cast<std::size_t>(s)];
        double ready = 0;
        if (op.forward && s > 0) {
          const double before = forward_end[index(s - 1, op.micro_batch)];
          if (before == unknown) break;
          ready = before + stages[static_cast<std::size_t>(s - 1)].send_forward_s;
        } else if (!op.forward && s < p - 1) {
          const double after = backward_end[index(s + 1, op.micro_batch)];
          if (after == unknown) break;
          ready = after + stages[static_cast<std::size_t>(s + 1)].send_backward_s;
        }
        const double start = std::max(ready, free_at[static_cast<std::size_t>(s)]);
        const double end = start + (op.forward ? c.forward_s : c.backward_s);
        (op.forward ? forward_end : backward_end)[index(s, op.micro_batch)] = end;
        free_at[static_cast<std::size_t>(s)] = end;
        if (!op.forward) run.last_backward_start_s[static_cast<std::size_t>(s)] = start;
        if (record) run.trace.spans.push_back({s, op.forward ? SpanKind::forward : SpanKind::backward, 0, start, end});
        ++at;
        --left;
        progress = true;
      }
    }
    if (!progress) throw std::logic_error("pipeline: schedule deadlocked");  // cannot happen for these orders
  }
  run.finish_s = free_at;
  run.time_s = *std::max_element(free_at.begin(), free_at.end());
  const auto last = static_cast<std::size_t>(std::max_element(free_at.begin(), free_at.end()) - free_at.begin());
  const double busy = m * (stages[last].forward_s + stages[last].backward_s);
  run.bubble_fraction = run.time_s > 0 ? 1.0 - busy / run.time_s : 0.0;
  return run;
}

int replica_batch(const TrainingSetup& setup, const ParallelLayout& layout) {
  if (setup.scaling == ScalingMode::weak) {  // batch x accelerators in all, shared by the D replicas
    const long long replica = static_cast<long long>(setup.batch) * layout.tensor * layout.pipeline;
    if (replica > std::numeric_limits<int>::max()) {
      throw std::invalid_argument("a replica's batch of " + std::to_string(replica) + " samples is too large");
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
  if (layout.data < 1 || layout.tensor < 1 || layout.pipeline < 1 || layout.micro_batches < 1) {
    throw std::invalid_argument("parallel: data, tensor, pipeline and micro_batches must be >= 1");
  }
  if (layout.tensor > per_node || per_node % layout.tensor != 0) {
    throw std::invalid_argument("parallel.tensor: " + std::to_string(layout.tensor) +
                                " must divide the accelerators of a node (" + std::to_string(per_node) +
                                "): tensor parallelism stays inside a node");
  }
  ParallelPrediction out;
  out.layout = layout;
  out.accelerators = layout.accelerators();
  out.nodes = (out.accelerators + per_node - 1) / per_node;
  out.replica_batch = replica_batch(setup, layout);
  out.global_batch = out.replica_batch * layout.data;
  if (out.replica_batch % layout.micro_batches != 0) {
    throw std::invalid_argument("parallel.micro_batches: a replica's batch of " + std::to_string(out.replica_batch) +
                                " does not split into " + std::to_string(layout.micro_batches) + " micro-batches");
  }
  out.micro_batch = static_cast<double>(out.replica_batch) / layout.micro_batches;
  const auto ranges = split_stages(setup.model, layout.pipeline);
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

  // 1. the pipeline of replica 0, tensor rank 0
  const Precision precision = setup.compute.precision;
  const double value = gradient_bytes_per_param(precision);
  const AlphaBetaGamma intra = intra_node_cost(cluster);
  std::vector<StageCost> costs(static_cast<std::size_t>(layout.pipeline));
  std::vector<double> tensor_comm(static_cast<std::size_t>(layout.pipeline), 0.0);  // per micro-batch, fwd + bwd
  for (int s = 0; s < layout.pipeline; ++s) {
    const Model stage = stage_model(setup.model, ranges[static_cast<std::size_t>(s)], layout.tensor);
    StageCost& c = costs[static_cast<std::size_t>(s)];
    for (const Layer& layer : stage.layers) {
      c.forward_s += forward_seconds(layer, out.micro_batch, setup.device, setup.compute);
      c.backward_s += backward_seconds(layer, out.micro_batch, setup.device, setup.compute);
      if (tensor_split(layer) && layout.tensor > 1) {
        const auto bytes =
            static_cast<std::uint64_t>(std::llround(out.micro_batch * layer.tensor_parallel_values * value));
        const double t = ring_allreduce_seconds(layout.tensor, bytes, intra);
        c.forward_s += t;
        c.backward_s += t;
        tensor_comm[static_cast<std::size_t>(s)] += 2 * t;
      }
    }
    const auto range = ranges[static_cast<std::size_t>(s)];
    if (s < layout.pipeline - 1) {
      const double bytes =
          boundary_bytes_per_sample(setup.model.layers[range.second - 1], precision) * out.micro_batch / layout.tensor;
      c.send_forward_s =
          transfer_seconds(cluster, accelerator_of(layout, 0, s, 0), accelerator_of(layout, 0, s + 1, 0), bytes);
    }
    if (s > 0) {
      const double bytes =
          boundary_bytes_per_sample(setup.model.layers[range.first - 1], precision) * out.micro_batch / layout.tensor;
      c.send_backward_s =
          transfer_seconds(cluster, accelerator_of(layout, 0, s, 0), accelerator_of(layout, 0, s - 1, 0), bytes);
    }
  }
  PipelineRun pipe = simulate_pipeline(costs, layout.micro_batches, layout.schedule, record);
  // the stage whose pipeline ends last is the one simulated with its data-parallel synchronisation
  std::size_t r = 0;
  for (std::size_t s = 1; s < costs.size(); ++s) {
    if (pipe.finish_s[s] > pipe.finish_s[r]) r = s;
  }
  const Model stage = stage_model(setup.model, ranges[r], layout.tensor);
  out.simulated_stage = static_cast<int>(r);

  // 2. its last micro-batch's backward with every group's gradient synchronisation on SimGrid
  TrainingSetup stage_setup = setup;
  stage_setup.model = stage;
  const int groups = layout.tensor * layout.pipeline;
  const Backend backend = auto_backend(out.accelerators);  // SimGrid up to 64 accelerators, flow above
  const LayoutNetwork net(setup, cluster, layout);
  const AlgorithmOptions& options = net.options;
  const SimGridOptions& sg = net.sg;
  TrainingProgram program = make_program(stage_setup, layout.data, static_cast<int>(std::lround(out.micro_batch)),
                                         algorithm, options, per_node);
  for (std::size_t l = 0; l < program.forward_s.size(); ++l) {  // tensor allreduces inside the layers' times
    const Layer& layer = stage.layers[l];
    if (tensor_split(layer) && layout.tensor > 1) {
      const auto bytes =
          static_cast<std::uint64_t>(std::llround(out.micro_batch * layer.tensor_parallel_values * value));
      const double t = ring_allreduce_seconds(layout.tensor, bytes, intra);
      program.forward_s[l] += t;
      program.backward_s[l] += t;
    }
  }
  const double stage_forward_with_tensor = std::accumulate(program.forward_s.begin(), program.forward_s.end(), 0.0);
  // the pipeline up to the last backward: all of it happens before the program's backward starts
  program.forward_s[0] += pipe.last_backward_start_s[r] - stage_forward_with_tensor;
  if (setup.input.enabled) {
    program.batch_s *= layout.micro_batches;  // the loader prepares the replica's whole batch
  } else {
    program.steps = 1;  // nothing carries over from one step to the next
  }
  if (layout.sharding != Sharding::none) program.optimizer_s /= layout.data;  // each rank steps its shard
  const int ranks = out.accelerators;
  double gather_exposed_forward = 0;
  double gather_exposed_backward = 0;
  if (layout.data > 1) {
    const double gradient = stage.params() * value;
    if (layout.sharding == Sharding::zero3) {
      // gradients are reduce-scattered bucket by bucket; parameters allgathered before forward and before backward
      for (Schedule& bucket : program.buckets) {
        bucket = ring_reduce_scatter(layout.data, bucket.bytes, options);
      }
      const Schedule gather = replicate_groups(
          ring_allgather(layout.data, static_cast<std::uint64_t>(std::llround(gradient)), options), groups);
      const double t_gather =
          backend == Backend::flow ? run_flow(gather, flow_options(sg)).time_s : run_simgrid(gather, sg).time_s;
      const double layers = static_cast<double>(stage.layers.size());
      const double f_total = stage_forward_with_tensor * layout.micro_batches;
      const double b_total =
          std::accumulate(program.backward_s.begin(), program.backward_s.end(), 0.0) * layout.micro_batches;
      gather_exposed_forward = layout.prefetch ? std::max(t_gather / layers, t_gather - f_total) : t_gather;
      gather_exposed_backward = layout.prefetch ? std::max(t_gather / layers, t_gather - b_total) : t_gather;
      program.forward_s[0] += gather_exposed_forward + gather_exposed_backward;
    }
    for (Schedule& bucket : program.buckets)
      bucket = replicate_groups(bucket, groups);
  } else {
    program.buckets.clear();
    program.bucket_ready_after.clear();
  }
  const TrainingResult result = backend == Backend::flow
                                    ? run_flow_training(program, ranks, flow_options(sg))
                                    : run_simgrid_training(with_expanded_buckets(program), ranks, sg);

  // 3. the breakdown of the simulated stage's step
  const StageCost& c = costs[r];
  out.step_s = result.step_s;
  out.samples_per_s = out.global_batch / out.step_s;
  out.tensor_comm_s = tensor_comm[r] * layout.micro_batches;
  out.compute_s = layout.micro_batches * (c.forward_s + c.backward_s) - out.tensor_comm_s;
  out.bubble_s = pipe.finish_s[r] - layout.micro_batches * (c.forward_s + c.backward_s);
  out.bubble_fraction = out.step_s > 0 ? out.bubble_s / out.step_s : 0;
  out.data_exposed_s = result.exposed_comm_s + gather_exposed_forward + gather_exposed_backward;
  out.data_comm_s = result.comm_s;
  out.input_stall_s = result.input_stall_s;
  out.optimizer_s = result.optimizer_s;
  out.pipeline_trace = std::move(pipe.trace);
  const double parts[] = {out.compute_s, out.tensor_comm_s, out.bubble_s, out.data_exposed_s, out.input_stall_s};
  const char* names[] = {"compute", "tensor-parallel allreduces", "pipeline bubble", "data-parallel communication",
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
      for (Sharding z : {Sharding::none, Sharding::zero1, Sharding::zero2, Sharding::zero3}) {
        if (z != Sharding::none && l.data == 1) break;
        l.sharding = z;
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
  return out;
}

LastBucket last_bucket_alone(const TrainingSetup& setup, const ClusterSpec& cluster, const ParallelLayout& layout,
                             const std::string& algorithm, int stage) {
  if (layout.data < 2) throw std::invalid_argument("last bucket: needs at least 2 data-parallel replicas");
  const auto ranges = split_stages(setup.model, layout.pipeline);
  if (stage < 0 || stage >= layout.pipeline) throw std::invalid_argument("last bucket: no such stage");
  const auto range = ranges[static_cast<std::size_t>(stage)];
  TrainingSetup stage_setup = setup;
  stage_setup.model = stage_model(setup.model, range, layout.tensor);
  const std::vector<GradientBucket> buckets = gradient_buckets(stage_setup);
  if (buckets.empty()) throw std::invalid_argument("last bucket: the stage has no parameters");
  const Backend backend = auto_backend(layout.accelerators());
  const LayoutNetwork net(setup, cluster, layout);
  LastBucket out;
  out.bucket = buckets.back();
  out.bucket.first_layer += range.first;  // in the whole model's numbering
  out.bucket.last_layer += range.first;
  out.buckets = buckets.size();
  out.operation = layout.sharding == Sharding::zero3 ? "ring reduce-scatter" : algorithm + " allreduce";
  out.backend = backend;
  const Schedule one = layout.sharding == Sharding::zero3
                           ? ring_reduce_scatter(layout.data, out.bucket.bytes, net.options)
                           : find_algorithm(algorithm).build(layout.data, out.bucket.bytes, net.options);
  const Schedule all = replicate_groups(one, layout.tensor * layout.pipeline);
  out.alone_s = backend == Backend::flow ? run_flow(all, flow_options(net.sg)).time_s : run_simgrid(all, net.sg).time_s;
  return out;
}

}  // namespace dtsim
