#include "cli/collective_runs.hpp"

#include <algorithm>
#include <sstream>

#include "algorithms/hierarchical.hpp"
#include "algorithms/parameter_server.hpp"
#include "algorithms/ring.hpp"
#include "reports/format.hpp"
#include "reports/grounding.hpp"
#include "reports/progress.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/cluster_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/units.hpp"
#include "sim/algorithm_choice.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/flow_executor.hpp"
#include "sim/library_cost.hpp"
#include "sim/simgrid_executor.hpp"

namespace dtsim::cli {

std::vector<FlagSpec> run_flags() {
  const std::vector<FlagSpec> options = algorithm_option_flags();
  return concat_flags({network_flags, options});
}

RunSettings parse_run_settings(const Flags& flags) {
  RunSettings settings;
  settings.cost.bandwidth_Bps = flags.bandwidth_Bps("bandwidth", min_bandwidth_Bps, max_rate_Bps);
  settings.cost.alpha_s = flags.seconds("latency", 0, max_delay_s);
  settings.cost.gap_s = flags.seconds("gap", 0, max_delay_s);
  settings.cost.reduce_Bps = flags.bandwidth_Bps("reduce-rate", min_bandwidth_Bps, max_rate_Bps);
  settings.backend = flags.choice("backend", {"auto", "simgrid", "analytical", "flow"});
  settings.network_model = flags.choice("network-model", {"CM02", "LV08"});
  if (settings.backend == "flow" && settings.network_model != "CM02") {
    throw UsageError("--network-model: " + settings.network_model + " needs --backend simgrid (flow is CM02's model)");
  }
  if (settings.backend == "analytical" && flags.has("network-model")) {
    throw UsageError("--network-model: the analytical backend has no network model (it is --backend simgrid's)");
  }
  if (settings.backend == "auto" && settings.network_model != "CM02") settings.backend = "simgrid";
  settings.rank_classes = flags.choice("rank-classes", {"on", "off"}) == "on";
  parse_protocol(flags.choice("protocol", {"auto", "ll", "ll128", "simple", "none"}), settings.protocol,
                 settings.protocol_automatic);
  settings.force = flags.has("force");
  if (flags.has("rank-classes") && settings.backend != "flow" && settings.backend != "auto") {
    throw UsageError("--rank-classes: only the flow backend simulates classes of ranks (got --backend " +
                     settings.backend + ")");
  }
  settings.algorithm = parse_algorithm_options(flags);
  if (flags.has("calibration")) {
    Calibration calibration;
    try {
      calibration = load_calibration_file(flags.get("calibration"));
    } catch (const ScenarioError& e) {
      throw UsageError(std::string("--calibration: ") + e.what());
    }
    if (calibration.network.empty()) {
      throw UsageError("--calibration: " + flags.get("calibration") +
                       " has no network fits (it was measured with "
                       "--no-network)");
    }
    settings.factors = network_factors(calibration.network);
    const NetworkRange reference = reference_network(calibration.network);
    const bool star = !flags.accepts("cluster") || !flags.has("cluster");
    if (star && !flags.has("latency")) settings.cost.alpha_s = reference.alpha_s;
    if (star && !flags.has("bandwidth")) settings.cost.bandwidth_Bps = reference.bandwidth_Bps;
    if (star && !flags.has("reduce-rate")) settings.cost.reduce_Bps = calibration.reduce_Bps;
    if (star && !flags.has("gap") && calibration.message_gap_s > 0) settings.cost.gap_s = calibration.message_gap_s;
  }
  if (!flags.accepts("cluster") || !flags.has("cluster")) {
    for (const char* name : {"placement", "order", "nodes", "library"}) {
      if (flags.accepts(name) && flags.has(name)) throw UsageError("--" + std::string(name) + ": needs --cluster");
    }
    if (settings.protocol != Protocol::none) {
      throw UsageError("--protocol: " + std::string(to_string(settings.protocol)) +
                       " needs --cluster with a collective library (cluster.library); accepted here: auto, none");
    }
    return settings;
  }
  for (const char* name : {"bandwidth", "latency", "gap", "reduce-rate"}) {
    if (flags.has(name)) {
      throw UsageError("--" + std::string(name) +
                       ": not with --cluster (the cluster file gives every link and the "
                       "reduce rate)");
    }
  }
  settings.cluster = cluster_from_flag(flags.get("cluster"));
  if (flags.accepts("library") && flags.has("library")) apply_library_flag(*settings.cluster, flags.get("library"));
  settings.placement =
      flags.choice("placement", {"block", "round-robin"}) == "block" ? Placement::block : Placement::round_robin;
  settings.order = flags.choice("order", {"topology", "rank"}) == "topology" ? RankOrder::topology : RankOrder::rank;
  settings.cost.reduce_Bps = settings.cluster->node.reduce_Bps;
  if (const CollectiveLibrary& library = settings.cluster->library; settings.protocol != Protocol::none) {
    if (!library.enabled()) {
      throw UsageError("--protocol: " + std::string(to_string(settings.protocol)) +
                       " needs a collective library, and " + flags.get("cluster") +
                       " names none (cluster.library); accepted: auto, none");
    }
    if (!library.allows(settings.protocol)) {
      throw UsageError("--protocol: " + std::string(to_string(settings.protocol)) + " is not among " +
                       flags.get("cluster") + "'s cluster.library.protocols");
    }
  }
  // a cluster's accelerators are all ranks: parameter servers can only share them
  if (!flags.has(ps_placement_option.name)) {
    settings.algorithm.set(ps_placement_option.name, "colocated");
  } else if (settings.algorithm.text(ps_placement_option) != "colocated") {
    throw UsageError(
        "--ps-placement: hosts is not possible with --cluster (the cluster has no spare hosts); use "
        "colocated, the default with --cluster");
  }
  if (!flags.has(ranks_per_node_option.name)) {
    settings.algorithm.set(ranks_per_node_option.name, static_cast<std::uint64_t>(settings.cluster->node.accelerators));
  }
  if (!flags.has(channel_group_option.name)) {
    settings.algorithm.set(channel_group_option.name, static_cast<std::uint64_t>(settings.cluster->node.accelerators));
  }
  return settings;
}

int parse_nodes(const Flags& flags, const ClusterSpec& cluster) {
  if (!flags.has("nodes")) return cluster.nodes;
  return static_cast<int>(flags.integer("nodes", 1, 1 << 20));
}

std::string cluster_description(const RunSettings& settings, const std::string& nodes) {
  const ClusterSpec& spec = *settings.cluster;
  std::ostringstream line;
  line << spec.name << ": " << nodes << " nodes x " << spec.node.accelerators << ' ' << spec.node.accelerator << ", "
       << to_string(spec.node.intra_kind) << ", " << spec.node.nics << " x "
       << format_bits_per_s(spec.node.nic.bandwidth_Bps) << " NICs, " << to_string(spec.fabric.kind) << ", placement "
       << (settings.placement == Placement::block ? "block" : "round-robin") << ", order "
       << (settings.order == RankOrder::topology ? "topology" : "rank");
  return line.str();
}

ClusterInstance instantiate_cluster(const RunSettings& settings, int nodes) {
  ClusterSpec spec = *settings.cluster;
  spec.nodes = nodes;
  ClusterInstance instance;
  // (named as the user gave the count: --nodes, or the file's own field)
  const std::string origin =
      (nodes == settings.cluster->nodes ? "--cluster: cluster.nodes = " : "--nodes ") + std::to_string(nodes);
  try {
    instance.topology = std::make_shared<const Topology>(spec);
  } catch (const TopologyError& e) {
    throw UsageError(origin + ": " + e.what());
  }
  instance.accelerator_of = place_positions(*instance.topology, settings.placement, settings.order);
  instance.description = cluster_description(settings, std::to_string(nodes));
  instance.ranks_origin = origin + " (" + std::to_string(instance.topology->accelerators()) + " ranks)";
  return instance;
}

Schedule build_schedule(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                        const ClusterInstance* cluster) {
  try {
    return algorithm.build(ranks, bytes, options);
  } catch (const OptionError& e) {
    throw UsageError("--" + e.option + ": " + e.what());
  } catch (const std::invalid_argument& e) {  // (on a cluster, named by the node count the ranks came from)
    if (cluster != nullptr) throw UsageError(cluster->ranks_origin + ": " + e.what() + "; use fewer nodes");
    throw UsageError(std::string("--ranks: ") + e.what());
  }
}

std::string resolved_backend(const RunSettings& settings, const Schedule& schedule) {
  if (settings.backend != "auto") return settings.backend;
  const Backend by_ranks = auto_backend(schedule.ranks);
  const bool needs_simgrid = settings.record || settings.real_payload;
  if (by_ranks == Backend::simgrid && !needs_simgrid && expanded_op_count(schedule) > record_ops_limit) {
    return to_string(Backend::flow);  // (SimGrid at about 2.5 us a message: seconds; the flow executor: milliseconds)
  }
  return to_string(by_ranks);
}

namespace {

// The flag and the words that name a schedule's size in a refusal: its ranks, and the parameter servers on hosts of
// their own where it has them (a million --servers made 1000064 "--ranks").
std::string size_words(const Schedule& schedule) {
  const int servers = schedule.ranks - schedule.participants;
  if (schedule.participants > 0 && servers > 0 && !schedule.switch_helpers) {
    return "--servers: " + std::to_string(schedule.participants) + " ranks and " + std::to_string(servers) + " servers";
  }
  return "--ranks: " + std::to_string(schedule.ranks) + " ranks";
}

// Refuses, before it starts, a run that SimGrid cannot hold (more actors than this machine allows) or that would not
// fit in this machine's available memory (with --real-payload, the payload's buffers and copies too); --force runs
// the latter anyway.
void check_resources(const Schedule& schedule, const std::string& backend, const RunSettings& settings) {
  if (backend != "flow") {  // the other executors expand a compact schedule: refused here, before it starts
    try {
      check_expanded_size(schedule);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--ranks: ") + e.what());
    }
  }
  if (backend == "simgrid") {
    try {
      check_simgrid_actors(schedule.ranks);
    } catch (const std::invalid_argument& e) {
      std::string why = e.what();
      if (const std::string prefix = "simgrid executor: "; why.starts_with(prefix)) why.erase(0, prefix.size());
      throw UsageError("--ranks: " + std::to_string(schedule.ranks) + " ranks on SimGrid, one actor each: " + why +
                       ": use --backend flow, or fewer ranks");
    }
  }
  if (backend == "simgrid" && !settings.force) {
    const double seconds = estimated_simgrid_seconds(schedule);
    if (seconds > simgrid_time_limit_s) {
      throw UsageError(size_words(schedule) + " of " + schedule.algorithm + " on SimGrid would take about " +
                       format_seconds(seconds) +
                       " (2.5 us a message, and 0.6 ns more for each message in flight with it), above the " +
                       format_seconds(simgrid_time_limit_s) +
                       " limit: use --backend flow (the same network model), fewer ranks, or --force to run it anyway");
    }
  }
  const bool payload = settings.real_payload && backend == "simgrid";
  const RunMemory executor = backend == "simgrid" ? RunMemory::simgrid
                             : backend == "flow"  ? RunMemory::flow
                                                  : RunMemory::analytical;
  const std::uint64_t need = estimated_run_bytes(schedule, executor, payload);
  const std::uint64_t have = available_memory_bytes();
  if (have == 0 || need <= have || settings.force) return;
  if (payload) {
    throw UsageError("--real-payload: " + std::to_string(schedule.ranks) + " ranks x " + format_bytes(schedule.bytes) +
                     " of floats need about " + format_bytes(need) + " of memory (" +
                     format_bytes(estimated_payload_bytes(schedule)) +
                     " for every rank's buffer and the copies in flight); this machine has " + format_bytes(have) +
                     " available: use fewer --ranks or a smaller --bytes, or --force to run it anyway");
  }
  throw UsageError(size_words(schedule) + " of " + schedule.algorithm + " on " + backend + " need about " +
                   format_bytes(need) + " of memory (" + std::to_string(executed_op_count(schedule, executor)) +
                   " schedule ops); this machine has " + format_bytes(have) + " available" +
                   (backend == "simgrid" ? ": use --backend flow, or fewer ranks" : ": use fewer ranks") +
                   ", or --force to run it anyway");
}

// The network every executor runs: the star's costs and the calibrated factors, or the cluster and where each
// position runs.
NetworkCost network_cost(const RunSettings& settings, const ClusterInstance* cluster) {
  NetworkCost network;
  network.cost = settings.cost;
  network.factors = settings.factors;
  if (cluster != nullptr) {
    network.topology = cluster->topology.get();
    network.accelerator_of = cluster->accelerator_of;
    network.library = cluster->topology->spec().library;
  }
  return network;
}

const char* const switch_helpers_need =
    "it needs --cluster with switches that can (node.intra.nvls, fabric.sharp); the star has none";

// An all-to-all of fewer elements than its P x P blocks leaves blocks empty: their messages still cost a latency and
// a gap each, which the user should know they asked for (empty when every block holds an element).
std::string empty_blocks_note(Collective collective, int ranks, std::uint64_t bytes, std::uint64_t blocks,
                              std::uint64_t empty, std::uint64_t largest_block_bytes) {
  if (collective != Collective::alltoall || blocks == 0 || empty == 0) return {};
  return std::to_string(empty) + " of the " + std::to_string(blocks) + " blocks (" + std::to_string(ranks) + " x " +
         std::to_string(ranks) + ") hold no element: " + format_bytes(bytes) +
         " is less than an element a block, so their messages carry nothing but still pay their latency and gap; "
         "--bytes " +
         format_bytes(blocks * largest_block_bytes) + " or more fills every block";
}

std::string empty_blocks_note(const Schedule& schedule) {
  if (schedule.collective != Collective::alltoall || schedule.chunks.empty()) return {};
  const auto empty = static_cast<std::uint64_t>(
      std::count_if(schedule.chunks.begin(), schedule.chunks.end(), [](const Chunk& c) { return c.size_bytes == 0; }));
  const std::uint64_t element =
      std::max_element(schedule.chunks.begin(), schedule.chunks.end(), [](const Chunk& a, const Chunk& b) {
        return a.size_bytes < b.size_bytes;
      })->size_bytes;
  return empty_blocks_note(schedule.collective, schedule.ranks, schedule.bytes, schedule.chunks.size(), empty, element);
}

// Where a run on a cluster adds notes, and on the star its closed form.
void finish_run(CollectiveRun& run, const RunSettings& settings, const ClusterInstance* cluster,
                Collective collective) {
  if (cluster != nullptr) {
    run.cluster = cluster->description;
    const ClusterSpec& spec = cluster->topology->spec();
    if (const std::string plain = plain_messages_note(spec); spec.nodes > 1 && !plain.empty()) {
      run.note += (run.note.empty() ? "" : "; ") + plain;
    }
    return;  // the star's closed forms do not describe a routed cluster
  }
  if (!settings.factors.empty()) return;  // nor a calibrated piecewise network
  run.closed_form_s = find_algorithm(run.algorithm, collective)
                          .closed_form_seconds(run.ranks, run.bytes, settings.cost, settings.algorithm);
}

// An all-pairs algorithm (direct) too large to write out (more than all_pairs_ops_limit operations) on the flow
// executor, in classes of ranks from the cluster's symmetry (sim/all_pairs_lumping.hpp: on a network where they are
// exact; where they average the fabric's loads only when the written schedule cannot be built), in the library's
// protocol as plan_library_call would choose it, where nothing asks for its messages themselves (a trace, a real
// payload, every rank simulated, SimGrid or the analytical executor); nothing otherwise, and the schedule is built as
// for any algorithm.
std::optional<CollectiveRun> run_all_pairs(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                                           const AlgorithmOptions& options, const RunSettings& settings,
                                           const ClusterInstance* cluster) {
  if (!settings.rank_classes || settings.record || settings.real_payload ||
      (settings.backend != "auto" && settings.backend != "flow")) {
    return std::nullopt;
  }
  const std::optional<AllPairs> described = algorithm.pairs(ranks, bytes, options);
  if (!described || described->op_count() <= all_pairs_ops_limit) return std::nullopt;
  const AllPairs& pairs = *described;
  const bool buildable = pairs.op_count() <= ScheduleBuilder::max_ops;
  if (cluster != nullptr && static_cast<std::size_t>(ranks) != cluster->accelerator_of.size()) return std::nullopt;
  CollectiveRun run;
  run.algorithm = algorithm.name;
  run.collective = to_string(pairs.collective);
  run.ranks = ranks;
  run.bytes = bytes;
  run.backend = to_string(Backend::flow);
  run.network_model = "CM02";
  run.cost = settings.cost;
  FlowOptions fo(network_cost(settings, cluster));
  fo.lump_ranks = true;
  // the collective library's protocol (forced, or its choice: NCCL's send/receive rule for all-to-all, gather and
  // scatter, the tuner's otherwise), in one channel as it runs direct
  if (cluster != nullptr && fo.library.enabled() &&
      (settings.protocol_automatic || settings.protocol != Protocol::none)) {
    run.protocol = settings.protocol_automatic ? tuned_protocol(fo, pairs) : settings.protocol;
    run.library = fo.library.name;
  }
  // classes that are exact; that average the fabric's loads only where the written schedule cannot be built; on
  // fabrics whose routes load links of one class unequally, never (the written schedule runs instead, or is refused)
  lumping::AllPairsFit fit = lumping::AllPairsFit::exact;
  std::optional<ExecutionResult> result = run_flow_all_pairs(
      pairs, fo, run.protocol, buildable ? lumping::AllPairsFit::exact : lumping::AllPairsFit::averaged, &fit);
  if (!result) return std::nullopt;
  run.result = std::move(*result);
  const std::uint64_t elements = bytes / pairs.element_bytes;
  const std::uint64_t blocks = pairs.chunk_count();
  run.note = empty_blocks_note(pairs.collective, ranks, bytes, bytes == 0 ? 0 : blocks,
                               elements < blocks ? blocks - elements : 0, pairs.largest_chunk_bytes());
  run.note +=
      std::string(run.note.empty() ? "" : "; ") + "its " + std::to_string(pairs.messages()) + " messages ran as " +
      std::to_string(run.result.rank_classes) + (run.result.rank_classes == 1 ? " class" : " classes") +
      " of ranks found from the " + (cluster == nullptr ? "star's" : "cluster's") +
      " symmetry, without writing them out" +
      (fit == lumping::AllPairsFit::exact
           ? ""
           : ", and approximately: leaves or pods filled unequally, each fabric link given the mean load of "
             "its class (measured within 0.7% on full-bisection fat-trees, up to 17% too fast on oversubscribed "
             "ones; the written schedule, exact, would hold more than 2^28 operations)") +
      " (docs/flow.md, \"All pairs in classes\")";
  finish_run(run, settings, cluster, pairs.collective);
  return run;
}

}  // namespace

void check_switch_helpers(const AlgorithmInfo& algorithm, const ClusterInstance* cluster) {
  if (cluster == nullptr && algorithm.switch_helpers) {
    throw UsageError("--algorithm: " + std::string(algorithm.name) +
                     " reduces inside a switch: " + switch_helpers_need);
  }
}

CollectiveRun run_schedule(const Schedule& schedule, const RunSettings& settings, const ClusterInstance* cluster) {
  if (cluster == nullptr && schedule.switch_helpers) {
    throw UsageError("--algorithm: " + schedule.algorithm + " reduces inside a switch: " + switch_helpers_need);
  }
  if (cluster != nullptr && static_cast<std::size_t>(schedule.ranks) != cluster->accelerator_of.size()) {
    if (schedule.ranks > schedule.participants) {
      throw UsageError(
          "--ps-placement: with --cluster the parameter servers must be colocated (the cluster has no "
          "spare hosts)");
    }
    throw UsageError("--cluster: the schedule has " + std::to_string(schedule.ranks) + " ranks but the cluster " +
                     std::to_string(cluster->accelerator_of.size()) + " accelerators");
  }
  CollectiveRun run;
  run.algorithm = schedule.algorithm;
  run.collective = to_string(schedule.collective);
  run.ranks = schedule.participants;
  run.helper_ranks = schedule.ranks - schedule.participants;
  run.bytes = schedule.bytes;
  const std::string backend = resolved_backend(settings, schedule);
  run.backend = backend;
  run.cost = settings.cost;
  check_resources(schedule, backend, settings);
  run.protocol = schedule.protocol;
  if (schedule.protocol != Protocol::none && cluster != nullptr) run.library = cluster->topology->spec().library.name;
  if (backend == "simgrid") {
    SimGridOptions sg(network_cost(settings, cluster));
    sg.network_model = settings.network_model == "CM02" ? NetworkModel::cm02 : NetworkModel::lv08;
    sg.real_payload = settings.real_payload;
    run.network_model = settings.network_model;
    sg.record_trace = settings.record || (settings.auto_record && expanded_op_count(schedule) <= record_ops_limit);
    run.result = run_simgrid(schedule, sg);
    if (sg.record_trace) {
      run.links_recorded = true;
      run.links =
          cluster != nullptr
              ? cluster_link_usage(run.result.trace, *cluster->topology, cluster->accelerator_of, run.result.time_s)
              : star_link_usage(run.result.trace, schedule.ranks, settings.cost.bandwidth_Bps, run.result.time_s);
    }
  } else if (backend == "flow") {
    FlowOptions fo(network_cost(settings, cluster));
    fo.lump_ranks = settings.rank_classes;
    run.network_model = "CM02";
    // how far a long run is, on a terminal, once it has run for a second (the flow engine's messages posted)
    FractionLine line(schedule.algorithm + " on " + std::to_string(schedule.ranks) + " ranks: messages simulated",
                      true);
    if (line.shown()) fo.progress = [&](double fraction) { line.update(fraction); };
    run.result = run_flow(schedule, fo);
  } else {
    AnalyticalOptions ao(network_cost(settings, cluster));
    ao.record_trace = settings.record;
    run.result = run_analytical(schedule, ao);
  }
  run.note = empty_blocks_note(schedule);
  finish_run(run, settings, cluster, schedule.collective);
  return run;
}

CollectiveRun run_call(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                       const RunSettings& settings, const ClusterInstance* cluster) {
  check_switch_helpers(algorithm, cluster);
  if (std::optional<CollectiveRun> run = run_all_pairs(algorithm, ranks, bytes, options, settings, cluster))
    return *run;
  if (cluster == nullptr) return run_schedule(build_schedule(algorithm, ranks, bytes, options), settings, cluster);
  LibraryCallPlan plan;
  try {
    plan = plan_library_call(algorithm, ranks, options, bytes, network_cost(settings, cluster),
                             settings.protocol_automatic, settings.protocol,
                             !settings.real_payload);  // (a real payload checks each rank's own buffer: one copy)
  } catch (const OptionError& e) {
    throw UsageError("--" + e.option + ": " + e.what());
  } catch (const TopologyError& e) {  // (an algorithm the cluster cannot run: NVLS without in-switch reduction)
    throw UsageError(std::string("--algorithm: ") + e.what());
  } catch (const std::invalid_argument& e) {  // (too many ops: named by the node count the ranks came from)
    throw UsageError(cluster->ranks_origin + ": " + e.what() + "; use fewer nodes");
  }
  ClusterInstance laid = *cluster;
  laid.accelerator_of = std::move(plan.accelerator_of);
  CollectiveRun run = run_schedule(plan.schedule, settings, &laid);
  run.ranks = ranks;
  run.bytes = bytes;
  run.channels = plan.channels;
  return run;
}

CallChoice choose_call(Collective collective, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                       const RunSettings& settings, const ClusterInstance* cluster) {
  CallChoice out;
  out.settings = settings;
  AlgorithmChoice choice;
  try {
    choice = choose_algorithm(collective, ranks, bytes, options, network_cost(settings, cluster));
  } catch (const OptionError& e) {
    throw UsageError("--" + e.option + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--algorithm: auto: ") + e.what());
  }
  out.algorithm = choice.algorithm;
  out.chosen_by = choice.rule;
  for (const AlgorithmCandidate& c : choice.candidates)
    out.weighed.push_back({std::string(c.algorithm->name), c.protocol, c.estimate_s});
  if (settings.protocol_automatic && choice.protocol != Protocol::none) {
    out.settings.protocol = choice.protocol;  // the protocol the tuner weighed the algorithm in
    out.settings.protocol_automatic = false;
  }
  return out;
}

}  // namespace dtsim::cli
