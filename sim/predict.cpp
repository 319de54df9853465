#include "sim/predict.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "algorithms/hierarchical.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "models/ddp_buckets.hpp"
#include "sim/algorithm_choice.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/percent_text.hpp"
#include "sim/topology.hpp"

namespace dtsim {

namespace {

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

std::string memory_size(double bytes) {
  if (bytes >= 1e9) return gigabytes(bytes);
  char text[32];
  std::snprintf(text, sizeof text, "%.0f MB", bytes / 1e6);
  return text;
}

}  // namespace

std::vector<GradientBucket> gradient_buckets(const TrainingSetup& setup) {
  // whole layers' gradients in reverse layer order, bucketed as the framework does (none: one bucket)
  const Model& model = setup.model;
  const double value = reduce_bytes_per_param(setup);
  std::vector<std::uint64_t> bytes;
  for (std::size_t l = model.layers.size(); l-- > 0;)
    bytes.push_back(std::llround(model.layers[l].params * value));
  const std::uint64_t limit = setup.framework == FrameworkPreset::none ? UINT64_MAX : std::llround(setup.bucket_bytes);
  const std::uint64_t first = setup.framework == FrameworkPreset::ddp && setup.first_bucket_bytes > 0
                                  ? std::llround(setup.first_bucket_bytes)
                                  : limit;
  std::vector<GradientBucket> buckets;
  std::size_t upper = model.layers.size();  // one past the highest layer in no bucket yet
  auto next = bytes.begin();                // the bucket's first gradient, in reverse layer order
  for (const std::size_t count : ddp_bucket_counts(bytes, first, limit)) {
    const std::uint64_t held = std::accumulate(next, next + static_cast<std::ptrdiff_t>(count), std::uint64_t{0});
    next += static_cast<std::ptrdiff_t>(count);
    if (held > 0) buckets.push_back({held, upper - count, upper - 1});
    upper -= count;
  }
  return buckets;
}

TrainingProgram make_program(const TrainingSetup& setup, int ranks, int local_batch, const std::string& algorithm,
                             const AlgorithmOptions& options, int accelerators_per_node, MemoryBudget budget,
                             const NetworkCost* library) {
  TrainingProgram program;
  const Model& model = setup.model;
  if (setup.profile) {  // measured: the profile's times, at its own batch
    const MeasuredProfile& profile = *setup.profile;
    if (local_batch != profile.batch) {
      throw std::invalid_argument("profile " + profile.source + ": measured at a batch of " +
                                  std::to_string(profile.batch) + " per accelerator; this configuration runs " +
                                  std::to_string(local_batch) + " (weak scaling at the profile's batch only)");
    }
    for (const MeasuredLayer& layer : profile.layers) {
      program.forward_s.push_back(layer.forward_s);
      program.backward_s.push_back(layer.backward_s);
    }
    program.optimizer_s = profile.optimizer_s + profile.overhead_s;
  } else {
    for (const Layer& layer : model.layers) {
      program.forward_s.push_back(forward_seconds(layer, local_batch, setup.device, setup.compute));
      program.backward_s.push_back(backward_seconds(layer, local_batch, setup.device, setup.compute));
    }
    program.optimizer_s = optimizer_seconds(model.params(), setup.device, setup.compute, model.param_tensors());
  }
  program.steps = setup.steps;
  program.micro_batches = setup.accumulation;
  program.fusion_cycle_s = setup.fusion_cycle_s;
  program.overlap = reductions_overlap_backward(setup);
  if (setup.input.enabled) {
    const InputPipeline& in = setup.input;
    const int sharing = std::min(ranks, accelerators_per_node);  // accelerators fed by one node's pipeline
    const double per_sample =
        std::max(in.sample_bytes / in.storage_Bps, 1.0 / (in.decode_samples_per_s_per_core * in.cores));
    program.batch_s = per_sample * local_batch * sharing * setup.accumulation;  // every micro-batch of the step
    program.prefetch = in.prefetch;
  }
  if (ranks == 1) return program;  // nothing to allreduce
  const NetworkCost star;          // (auto's choice without a cluster: MPI's)
  const NetworkCost& network = library != nullptr ? *library : star;
  std::vector<std::uint64_t> bucket_bytes;
  for (const GradientBucket& bucket : gradient_buckets(setup)) {
    bucket_bytes.push_back(bucket.bytes);
    program.bucket_ready_after.push_back(bucket.first_layer);
  }
  std::vector<LibraryCallPlan> plans;  // a library's calls: protocol and channels, laid on units below
  for (const std::uint64_t bytes : bucket_bytes) {
    // a named algorithm, or auto's choice for this bucket (in the protocol the tuner weighed it in)
    const ResolvedAllreduce chosen = resolve_allreduce(algorithm, ranks, bytes, options, network);
    const AlgorithmInfo& info = *chosen.algorithm;
    if (library != nullptr && library->topology != nullptr) {  // (laid on the cluster: a library's calls, switches)
      plans.push_back(
          plan_library_call(info, ranks, options, bytes, *library, chosen.protocol == Protocol::none, chosen.protocol));
      program.reduce_channels = std::max(program.reduce_channels, plans.back().channels);
      program.buckets.push_back(plans.back().schedule);
    } else {
      program.buckets.push_back(info.build(ranks, bytes, options));
    }
    if (program.buckets.size() != 1 || budget.available_bytes == 0) continue;
    const Schedule& first = program.buckets.front();
    const std::uint64_t need = estimated_run_bytes(first, budget.executor) +
                               (bucket_bytes.size() - 1) * estimated_schedule_bytes(first, budget.executor);
    if (need > budget.available_bytes) {
      throw InsufficientMemory(
          algorithm + " needs about " + memory_size(static_cast<double>(need)) + " of memory (" +
          std::to_string(bucket_bytes.size()) + " gradient buckets of " +
          std::to_string(executed_op_count(first, budget.executor)) + " schedule ops each); this machine has " +
          memory_size(static_cast<double>(budget.available_bytes)) + " available: use fewer accelerators");
    }
  }
  // switch helpers (nvls, sharp): units of their own after the ranks' reduction units, on the switches the calls
  // place them on (the same for every call with the most of them)
  const LibraryCallPlan* helped = nullptr;
  for (const LibraryCallPlan& plan : plans) {
    if (!plan.schedule.switch_helpers) continue;
    if (helped == nullptr ||
        plan.schedule.ranks - plan.schedule.participants > helped->schedule.ranks - helped->schedule.participants) {
      helped = &plan;
    }
  }
  if (helped != nullptr) {
    program.helper_endpoints.assign(helped->accelerator_of.begin() + helped->schedule.participants,
                                    helped->accelerator_of.end());
  }
  if (program.reduce_channels > 1 || helped != nullptr) {  // channel c's copy of a call on the ranks' c-th units
    const int units = training_units(program, ranks);
    for (std::size_t b = 0; b < plans.size(); ++b) {
      const LibraryCallPlan& plan = plans[b];
      const auto participants = static_cast<std::size_t>(plan.schedule.participants);
      std::vector<int> unit_of(static_cast<std::size_t>(plan.schedule.ranks));
      for (std::size_t position = 0; position < unit_of.size(); ++position) {  // (accelerators are ranks here)
        if (position < participants) {
          unit_of[position] = static_cast<int>(position) / ranks * ranks + plan.accelerator_of[position];
          continue;
        }
        const std::size_t h = position - participants;
        if (plan.accelerator_of[position] != program.helper_endpoints[h]) {
          throw std::logic_error("training step: calls place their switch helpers on different switches");
        }
        unit_of[position] = ranks * program.reduce_channels + static_cast<int>(h);
      }
      program.buckets[b] = place_groups(plan.schedule, unit_of, units);
    }
  }
  if (library != nullptr && library->topology != nullptr) {  // a transport on the processor that computes
    const NodeSpec& node = library->topology->spec().node;
    if (node.transport_shares_processor()) {
      program.compute_rate_while_transporting = node.compute_rate_while_transporting;
      program.transport_rate_while_computing = node.transport_rate_while_computing;
      for (const Schedule& bucket : program.buckets) {
        program.bucket_wire_s.push_back(
            bucket_wire_seconds(bucket, program.reduce_channels, ranks, node.nic.bandwidth_Bps));
      }
    }
  }
  return program;
}

namespace {

// "; most utilised: the nic links (8 at 81% of their capacity)", or nothing where no link class is known.
std::string links_clause(const LinkClassLoad& links) {
  if (links.link_class.empty()) return "";
  if (links.links == 1) {
    return "; most utilised: a " + links.link_class + " link (" + percent(links.utilisation, 1.0) + " of its capacity)";
  }
  return "; most utilised: the " + links.link_class + " links (" + std::to_string(links.links) + " at " +
         percent(links.utilisation, 1.0) + " of their capacity)";
}

std::string name_bottleneck(const Prediction& p) {
  const TrainingResult& s = p.step;
  const double compute = s.forward_s + s.backward_s + s.optimizer_s;
  if (s.input_stall_s >= s.exposed_comm_s && s.input_stall_s > 0.1 * s.step_s) {
    return "input pipeline: the step waits " + percent(s.input_stall_s, s.step_s) +
           " of its time for data; faster storage or more decode cores would help";
  }
  if (s.exposed_comm_s > 0.1 * s.step_s) {
    return "communication: " + percent(s.exposed_comm_s, s.step_s) +
           " of the step waits for gradient allreduce that backward could not hide (allreduce busy " +
           percent(s.comm_s, s.step_s) + " of the step)" + links_clause(p.most_utilised_links);
  }
  if (p.accelerators > 1 && s.comm_s > 0.5 * s.backward_s) {
    return "compute, with communication nearly exposed: allreduce takes " + percent(s.comm_s, s.backward_s) +
           " of the backward pass that hides it" + links_clause(p.most_utilised_links);
  }
  return "compute: forward, backward and optimizer are " + percent(compute, s.step_s) + " of the step";
}

// The network of a data-parallel configuration: the cluster's first nodes, ranks placed block by block, and the
// algorithm's options (ps: one server shard per node, on its first accelerator).
struct DataParallelNetwork {
  std::unique_ptr<Topology> topology;
  SimGridOptions sg;
  AlgorithmOptions options;

  DataParallelNetwork(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators) {
    const int per_node = cluster.node.accelerators;
    const int nodes = (accelerators + per_node - 1) / per_node;
    ClusterSpec spec = cluster;
    spec.nodes = nodes;
    topology = std::make_unique<Topology>(spec);
    sg.topology = topology.get();
    sg.accelerator_of = place_positions(*topology, Placement::block, RankOrder::topology);
    sg.accelerator_of.resize(static_cast<std::size_t>(accelerators));
    sg.cost.reduce_Bps = cluster.node.reduce_Bps;
    sg.factors = setup.network_factors;
    sg.library = cluster.library;
    // (whichever algorithm runs: the others ignore these)
    options.set(ps_servers_option.name, static_cast<std::uint64_t>(nodes));
    options.set(ps_placement_option.name, "colocated");
    options.set(ranks_per_node_option.name,
                static_cast<std::uint64_t>(accelerators % per_node == 0 ? per_node : accelerators));
    options.set(ps_server_stride_option.name, static_cast<std::uint64_t>(per_node));
  }
};

// One step's computes on `device` (forward, backward, optimizer) at the setup's settings, in precision `precision`
// resolved for it (empty: the setup's own).
double step_compute_s(const TrainingSetup& setup, int local_batch, const Device& device, const std::string& precision) {
  ComputeSettings c = setup.compute;
  if (!precision.empty()) c.precision = precision_for(precision, device);
  double total = 0;
  for (const Layer& layer : setup.model.layers)
    total += forward_seconds(layer, local_batch, device, c) + backward_seconds(layer, local_batch, device, c);
  return total + optimizer_seconds(setup.model.params(), device, c, setup.model.param_tensors());
}

// Each bucket's reduction alone on the step's network and executor, as the step runs it (a library's channels on
// their units; buckets of one size and shape timed once).
std::vector<double> bucket_times(const TrainingProgram& program, const SimGridOptions& sg, const FlowOptions& fo,
                                 Backend backend) {
  SimGridOptions s = sg;
  FlowOptions f = fo;
  if (program.reduce_channels > 1 || !program.helper_endpoints.empty()) {
    s.accelerator_of = training_unit_accelerators(program, sg.accelerator_of);
    f.accelerator_of = s.accelerator_of;
    f.segment_rounds = true;
  }
  std::vector<double> times;
  for (std::size_t b = 0; b < program.buckets.size(); ++b) {
    const Schedule& bucket = program.buckets[b];
    const auto same = std::find_if(program.buckets.begin(), program.buckets.begin() + static_cast<std::ptrdiff_t>(b),
                                   [&](const Schedule& earlier) {
                                     return earlier.bytes == bucket.bytes && earlier.ops.size() == bucket.ops.size();
                                   });
    if (same != program.buckets.begin() + static_cast<std::ptrdiff_t>(b)) {
      times.push_back(times[static_cast<std::size_t>(same - program.buckets.begin())]);
      continue;
    }
    times.push_back(backend == Backend::simgrid ? run_simgrid(bucket, s).time_s : run_flow(bucket, f).time_s);
  }
  return times;
}

}  // namespace

FlowOptions flow_options(const SimGridOptions& sg) { return FlowOptions(static_cast<const NetworkCost&>(sg)); }

Prediction predict_step(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators,
                        const std::string& algorithm, StepTrace* trace, Backend backend,
                        std::optional<std::uint64_t> available_bytes, bool rank_classes, const StepSampling& sampling,
                        const std::function<void(double)>* progress) {
  if (accelerators < 1) throw std::invalid_argument("accelerators must be >= 1");
  if (trace != nullptr && backend != Backend::simgrid) throw std::invalid_argument("a trace needs the SimGrid backend");
  Prediction p;
  p.accelerators = accelerators;
  p.algorithm = algorithm;
  p.backend = backend;
  const int per_node = cluster.node.accelerators;
  p.nodes = (accelerators + per_node - 1) / per_node;
  if (setup.accumulation < 1) throw std::invalid_argument("accumulation must be >= 1");
  if (setup.scaling == ScalingMode::weak) {
    p.local_batch = setup.batch;
    p.global_batch = static_cast<long long>(setup.batch) * setup.accumulation * accelerators;
  } else {
    const long long shares = static_cast<long long>(accelerators) * setup.accumulation;
    if (setup.batch % shares != 0) {
      throw std::invalid_argument(
          "a global batch of " + std::to_string(setup.batch) + " does not split evenly over " +
          std::to_string(accelerators) + " accelerators" +
          (setup.accumulation > 1 ? " x " + std::to_string(setup.accumulation) + " micro-batches" : std::string()));
    }
    p.local_batch = static_cast<int>(setup.batch / shares);
    p.global_batch = setup.batch;
  }
  p.accumulation = setup.accumulation;
  p.memory = memory_use(setup, p.local_batch);
  if (p.memory.total_bytes() > setup.device.memory_bytes) {
    p.fits = false;
    p.bottleneck = "memory: needs " + gigabytes(p.memory.total_bytes()) + " per " + setup.device.name + ", has " +
                   gigabytes(setup.device.memory_bytes) + " (lacks " +
                   gigabytes(p.memory.total_bytes() - setup.device.memory_bytes) + "); not simulated";
    return p;
  }
  const DataParallelNetwork net(setup, cluster, accelerators);
  const SimGridOptions& sg = net.sg;
  const Topology& topology = *net.topology;
  const AlgorithmOptions& options = net.options;
  const MemoryBudget budget{backend != Backend::simgrid ? RunMemory::flow : RunMemory::simgrid,
                            available_bytes ? *available_bytes : available_memory_bytes()};
  TrainingProgram program = make_program(setup, accelerators, p.local_batch, algorithm, options, per_node, budget, &sg);
  if (!program.buckets.empty()) {  // (one accelerator reduces nothing)
    std::vector<std::uint64_t> bucket_bytes;
    for (const GradientBucket& bucket : gradient_buckets(setup))
      bucket_bytes.push_back(bucket.bytes);
    p.reductions = bucket_reductions(program.buckets, bucket_bytes);
  }
  if (backend == Backend::simgrid) {  // refused up front as a collective is (a step at 8192 ranks had run for minutes)
    double seconds = 0;
    for (const Schedule& bucket : program.buckets)
      seconds += estimated_simgrid_seconds(bucket);
    if (seconds > simgrid_time_limit_s) {
      std::ostringstream text;
      text.precision(4);
      text << "SimGrid would take about " << seconds << " s for the step's " << program.buckets.size() << " "
           << algorithm
           << " allreduces (2.5 us a message, and 0.6 ns more for each message in flight with it), above the "
           << simgrid_time_limit_s << " s limit: use --backend flow (the same network model) or fewer accelerators";
      throw std::invalid_argument(text.str());
    }
  }
  FlowOptions fo = flow_options(sg);
  fo.lump_ranks = rank_classes;
  fo.contention = backend == Backend::flow;
  SamplingRequest request;
  request.samples = sampling.samples;
  request.seed = sampling.seed;
  request.sampler = sampling.sampler;
  request.variability = &setup.variability;
  request.ranks_per_node = per_node;
  for (const DeviceGroup& group : setup.variability.devices) {  // each group's compute time over the scenario's
    request.device_slowdowns.push_back(step_compute_s(setup, p.local_batch, group.device, group.precision) /
                                       step_compute_s(setup, p.local_batch, setup.device, ""));
  }
  if (sampling.samples > 0 && sampling.sampler == Sampler::fast && setup.accumulation > 1) {
    throw std::invalid_argument(
        "batch.accumulation: the fast sampler draws one micro-batch a step; --sampler exact simulates every one");
  }
  if (sampling.samples > 0 && sampling.sampler == Sampler::exact && setup.variability.bursts.active()) {
    throw std::invalid_argument("variability.bursts: only the fast sampler draws bursts of traffic (--sampler fast)");
  }
  if (sampling.samples > 0 && sampling.sampler == Sampler::fast && !program.bucket_wire_s.empty()) {
    throw std::invalid_argument(
        "cluster.node.compute_rate_while_transporting and transport_rate_while_computing: only the exact sampler "
        "models a transport that shares the processor with the computes (--sampler exact)");
  }
  ComputeNoise slow;  // the run without jitter: slow nodes only (sample 0's, when chosen by fraction)
  slow.seed = sampling.seed;
  slow.rank_scale = sample_rank_scale(request, accelerators, 0);
  if (!slow.rank_scale.empty()) program.noise = &slow;
  const auto run = [&](RunTrace* into) {
    return backend != Backend::simgrid ? run_flow_training(program, accelerators, fo)
                                       : run_simgrid_training(program, accelerators, sg, into);
  };
  if (backend != Backend::simgrid) program.progress = progress;  // (SimGrid runs in a child process)
  p.step = run(trace != nullptr ? &trace->run : nullptr);
  program.progress = nullptr;
  if (sampling.samples > 0) {
    std::vector<double> steps;
    if (sampling.sampler == Sampler::exact) {  // the whole step again per sample, every rank drawing its times
      ComputeNoise noise;
      noise.jitter = &setup.variability.jitter;
      noise.seed = sampling.seed;
      program.noise = &noise;
      const auto started = std::chrono::steady_clock::now();
      for (int s = 0; s < sampling.samples; ++s) {
        noise.sample = static_cast<std::uint64_t>(s);
        noise.rank_scale = sample_rank_scale(request, accelerators, noise.sample);
        steps.push_back(run(nullptr).step_s);
        // the rest estimated from the first sample (a sample simulates every rank: classes no longer hold)
        const double first_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        if (s == 0 && sampling.max_seconds > 0 && first_s * sampling.samples > sampling.max_seconds) {
          char text[256];
          std::snprintf(text, sizeof text,
                        "%d exact samples of the step on %d accelerators would take about %.0f s (the first took "
                        "%.3g s), above the %.0f s limit: use --sampler fast (each bucket simulated once) or fewer "
                        "--samples",
                        sampling.samples, accelerators, first_s * sampling.samples, first_s, sampling.max_seconds);
          throw std::invalid_argument(text);
        }
      }
    } else {
      steps = sample_steps_fast(program, accelerators, bucket_times(program, sg, fo, backend), request);
    }
    program.noise = nullptr;
    p.distribution = summarize_steps(std::move(steps));
    p.distribution.seed = sampling.seed;
    p.distribution.sampler = sampling.sampler;
  }
  // (a library's channels: units of their own on the ranks' accelerators; switch helpers on their switches)
  const std::vector<int> unit_accelerators = training_unit_accelerators(program, sg.accelerator_of);
  if (trace != nullptr) {
    double run_s = 0;
    for (const SpanRecord& span : trace->run.spans)
      run_s = std::max(run_s, span.end_s);
    trace->links = cluster_link_usage(trace->run, topology, unit_accelerators, run_s);
  }
  p.samples_per_s = p.global_batch / (p.distribution.samples > 0 ? p.distribution.mean_s : p.step.step_s);
  const std::vector<double> link_bytes = step_link_bytes(program.buckets, topology, unit_accelerators);
  p.most_utilised_links = most_utilised_link_class(link_bytes, topology, p.step.step_s);
  std::vector<LinkGroup> groups = group_links(step_link_usage(link_bytes, topology, p.step.step_s));
  groups.resize(std::min(groups.size(), busiest_link_groups));
  p.busiest_links = std::move(groups);
  p.bottleneck = name_bottleneck(p);
  if (!slow.rank_scale.empty()) {  // (the run without draws: named slow nodes and devices)
    const double least = *std::min_element(slow.rank_scale.begin(), slow.rank_scale.end());
    const double most = *std::max_element(slow.rank_scale.begin(), slow.rank_scale.end());
    if (most > least) {
      const auto slower =
          std::count_if(slow.rank_scale.begin(), slow.rank_scale.end(), [least](double s) { return s > least; });
      char text[160];
      std::snprintf(text, sizeof text,
                    "; stragglers: %lld ranks compute up to %.2fx as long as the fastest, and every synchronous step "
                    "waits for them (the others' wait counts as exposed communication)",
                    static_cast<long long>(slower), most / least);
      p.bottleneck += text;
    }
  }
  return p;
}

void compare_to_baseline(Prediction& p, const Prediction& baseline) {
  if (!p.fits || !baseline.fits || baseline.samples_per_s <= 0) return;
  p.speedup = p.samples_per_s / baseline.samples_per_s;
  p.efficiency = p.speedup / p.accelerators;
}

std::vector<BucketReduction> bucket_reductions(const std::vector<Schedule>& buckets,
                                               const std::vector<std::uint64_t>& bucket_bytes) {
  if (buckets.size() != bucket_bytes.size()) throw std::logic_error("bucket_reductions: a size for every bucket");
  std::vector<BucketReduction> groups;
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const Schedule& s = buckets[b];
    const int channels = static_cast<int>(s.channels);
    auto group = std::find_if(groups.begin(), groups.end(), [&](const BucketReduction& g) {
      return g.algorithm == s.algorithm && g.protocol == s.protocol && g.channels == channels;
    });
    if (group == groups.end()) {
      groups.push_back({s.algorithm, s.protocol, channels, 0, bucket_bytes[b], bucket_bytes[b]});
      group = groups.end() - 1;
    }
    ++group->buckets;
    group->smallest_bytes = std::min(group->smallest_bytes, bucket_bytes[b]);
    group->largest_bytes = std::max(group->largest_bytes, bucket_bytes[b]);
  }
  return groups;
}

LastBucket last_bucket_alone(const TrainingSetup& setup, const ClusterSpec& cluster, int accelerators,
                             const std::string& algorithm, Backend backend) {
  if (accelerators < 2) throw std::invalid_argument("last bucket: needs at least 2 accelerators");
  const std::vector<GradientBucket> buckets = gradient_buckets(setup);
  if (buckets.empty()) throw std::invalid_argument("last bucket: the model has no parameters");
  const DataParallelNetwork net(setup, cluster, accelerators);
  LastBucket out;
  out.bucket = buckets.back();
  out.buckets = buckets.size();
  out.operation = algorithm + " allreduce";
  out.backend = backend;
  const ResolvedAllreduce chosen = resolve_allreduce(algorithm, accelerators, out.bucket.bytes, net.options, net.sg);
  const AlgorithmInfo& info = *chosen.algorithm;
  if (algorithm == auto_algorithm) out.operation = std::string(info.name) + " allreduce (auto)";
  // as the step reduces it: the library's protocol and channels (copies side by side on the ranks' accelerators)
  const LibraryCallPlan plan = plan_library_call(info, accelerators, net.options, out.bucket.bytes, net.sg,
                                                 chosen.protocol == Protocol::none, chosen.protocol);
  SimGridOptions sg = net.sg;
  sg.accelerator_of = plan.accelerator_of;
  FlowOptions fo = flow_options(sg);
  fo.contention = backend != Backend::analytical;
  out.alone_s =
      backend == Backend::simgrid ? run_simgrid(plan.schedule, sg).time_s : run_flow(plan.schedule, fo).time_s;
  return out;
}

}  // namespace dtsim
