// `dtsim draw --algorithm NAME --ranks P [--values v1,...,vP] [-o FILE.svg|.html]`: a collective's Schedule as
// pictures, round by round (reports/schedule_drawing.hpp), each round timed on SimGrid over the chosen network.
#include <algorithm>
#include <array>
#include <iostream>
#include <map>

#include "algorithms/hierarchical.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/schedule_rounds.hpp"
#include "cli/algorithm_flags.hpp"
#include "cli/collective_runs.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "models/compute_model.hpp"
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "reports/schedule_drawing.hpp"
#include "reports/step_drawing.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/scenario_file.hpp"
#include "scenarios/units.hpp"
#include "sim/predict.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 12> draw_own_flags{{
    {"scenario", "FILE", "",
     "draw a training step instead: the scenario's step on --accelerators (SimGrid), per rank class a compute row "
     "(forward, backward layer by layer, optimizer) and a row of its buckets' allreduces, exposed communication "
     "marked"},
    {"accelerators", "N", "the scenario's largest up to 64",
     "--scenario: the accelerators of the step drawn (1 to 64)"},
    {"nodes", "N", "from the file", "--cluster: number of nodes (ranks = nodes x accelerators per node)"},
    {"collective", "NAME", "allreduce",
     "allreduce, reduce-scatter, allgather, broadcast, reduce, gather, scatter or all-to-all"},
    {"algorithm", "NAME", "ring",
     "the algorithm to draw (any of dtsim collective's; without it: ring, or the collective's first where it has no "
     "ring, e.g. tree for broadcast, direct for all-to-all)"},
    {"ranks", "P", "8", "ranks, 2 to 64 drawn rank by rank (up to 4096 with --summary)"},
    {"bytes", "SIZE", "1MB", "buffer size per rank (labels the arrows; the picture's shape does not depend on it)"},
    {"root", "RANK", "0", "broadcast, reduce, gather and scatter: the root rank"},
    {"values", "V1,...,VP", "",
     "a number per rank: each chunk shows the sum of the numbers it holds, each arrow the sum it carries"},
    {"output", "FILE", "(SVG on standard output)",
     "FILE.svg: every round in a grid; FILE.html: one round at a time, previous, next and play (also -o FILE); "
     "written atomically"},
    {"summary", "", "", "draw the rounds as a chart of bytes moved per round instead of rank by rank (large P)"},
    {"times", "ON|OFF", "on",
     "time each round on --backend simgrid (auto: every message) or analytical (no contention) over the network "
     "flags' star (or --cluster)"},
}};

const std::vector<FlagSpec>& draw_flags() {
  static const std::vector<FlagSpec> flags = [] {
    const std::vector<FlagSpec> run = run_flags();
    return concat_flags({draw_own_flags, cluster_flags, run});
  }();
  return flags;
}

std::vector<double> parse_values(const Flags& flags, int ranks) {
  if (!flags.has("values")) return {};
  std::vector<double> values;
  for (const std::string& v : split(flags.get("values"))) {
    values.push_back(flags.parse("values", [&v](const std::string&) { return parse_number(v, -1e15, 1e15); }));
  }
  if (static_cast<int>(values.size()) != ranks) {
    throw UsageError("--values: expected one number per rank (" + std::to_string(ranks) + "), got " +
                     std::to_string(values.size()));
  }
  return values;
}

// Each round's start and end on the executor: its transfers are the executor's k-th transfer from src to dst.
// Rounds follow every sender-receiver pair's messages in order: a pair costs a channel (about 500 B and 5 us to
// follow, measured on direct at 2048 ranks: 4.2 million pairs, 2 GB, 15 s). A drawing follows at most this many.
constexpr std::uint64_t max_drawn_pairs = 1ULL << 22;

// The sender-receiver pairs of a schedule (its stored ops name every peer: a repeated step keeps its peers), counted
// rank by rank with a stamp per peer, so that counting them costs no memory per pair.
std::uint64_t communicating_pairs(const Schedule& s) {
  std::vector<int> stamp(static_cast<std::size_t>(s.ranks), -1);
  std::uint64_t pairs = 0;
  for (int r = 0; r < s.ranks; ++r) {
    for (const Op& op : s.rank_ops(r)) {
      if (op.kind() != OpKind::send || stamp[static_cast<std::size_t>(op.peer())] == r) continue;
      stamp[static_cast<std::size_t>(op.peer())] = r;
      ++pairs;
    }
  }
  return pairs;
}

std::vector<RoundTime> round_times(const ScheduleRounds& rounds, const RunTrace& trace) {
  std::map<std::pair<int, int>, std::vector<const TransferRecord*>> by_pair;
  for (const TransferRecord& t : trace.transfers)
    by_pair[{t.src, t.dst}].push_back(&t);
  for (auto& [pair, list] : by_pair) {
    std::stable_sort(list.begin(), list.end(),
                     [](const TransferRecord* a, const TransferRecord* b) { return a->start_s < b->start_s; });
  }
  std::vector<RoundTime> times(static_cast<std::size_t>(rounds.rounds), {1e300, 0});
  for (const RoundTransfer& t : rounds.transfers) {
    const auto found = by_pair.find({t.src, t.dst});
    if (found == by_pair.end() || static_cast<std::size_t>(t.index) >= found->second.size()) return {};
    const TransferRecord& r = *found->second[static_cast<std::size_t>(t.index)];
    RoundTime& rt = times[static_cast<std::size_t>(t.round)];
    rt.start_s = std::min(rt.start_s, r.start_s);
    rt.end_s = std::max(rt.end_s, r.end_s);
  }
  return times;
}

}  // namespace

const char* draw_usage() {
  static const std::string text =
      "usage: dtsim draw [--algorithm NAME] [--ranks P] [--values V1,...,VP] [-o FILE.svg|FILE.html]\n"
      "Draws a collective's schedule round by round: the ranks placed as the algorithm suggests (a circle, a tree, a\n"
      "hypercube, a hub, nodes), an arrow per transfer with its chunk and bytes (or the sum it carries), each\n"
      "rank's buffer as its chunks coloured by how many contributions they hold, each round timed on SimGrid.\n\n" +
      flags_help(draw_flags());
  return text.c_str();
}

namespace {

// --scenario: one training step of the scenario, per rank class, from SimGrid's trace.
int draw_step(const Flags& flags, std::ostream& out) {
  for (const char* flag : {"collective", "ranks", "bytes", "root", "values", "summary", "times", "cluster", "nodes"})
    flags.refuse_unless(flag, false, "not with --scenario (the step's own network and sizes are drawn)");
  const std::string file = flags.get("scenario");
  Scenario sc;
  try {
    sc = load_scenario_file(file, DTSIM_DATA_DIR);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  if (sc.parallel) throw UsageError("--scenario: data-parallel scenarios only, so far (this one has \"parallel\")");
  int accelerators = 0;
  for (const int a : sc.accelerators) {
    if (a <= max_drawn_ranks) accelerators = std::max(accelerators, a);
  }
  if (flags.has("accelerators")) accelerators = static_cast<int>(flags.integer("accelerators", 1, max_drawn_ranks));
  if (accelerators < 1) {
    throw UsageError("--accelerators: the scenario predicts none up to " + std::to_string(max_drawn_ranks) +
                     "; give one");
  }
  check_batch_splits(sc, {accelerators}, "--accelerators");
  const std::string algorithm = flags.has("algorithm") ? flags.get("algorithm") : sc.algorithms.front();
  StepTrace trace;
  Prediction p;
  try {
    p = predict_step(sc.setup, sc.cluster, accelerators, algorithm, &trace, Backend::simgrid);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--scenario: " + std::to_string(accelerators) + " accelerators: " + e.what());
  }
  if (!p.fits) throw UsageError("--accelerators: " + p.bottleneck);
  StepDrawing d;
  d.title = sc.name + ": " + sc.setup.model.name + ", " + algorithm + " allreduce on " + std::to_string(accelerators) +
            " accelerators, step " + format_seconds(p.step.step_s) + " (exposed communication " +
            format_seconds(p.step.exposed_comm_s) + ")";
  d.exposed_s = p.step.exposed_comm_s;
  // rank 0, standing for the ranks that run alike, and the slowest rank (the one whose optimizer ends last) when it
  // ends later than rank 0 by more than a millionth
  int slowest = 0;
  double latest = -1, rank0 = 0;
  for (const SpanRecord& s : trace.run.spans) {
    if (s.kind != SpanKind::optimizer) continue;
    if (s.rank == 0) rank0 = std::max(rank0, s.end_s);
    if (s.end_s > latest) {
      latest = s.end_s;
      slowest = s.rank;
    }
  }
  const bool apart = slowest != 0 && latest - rank0 > 1e-6 * latest;
  d.ranks.push_back(0);
  d.rank_notes.push_back(apart ? "rank 0" : "rank 0 (all " + std::to_string(accelerators) + " alike)");
  if (apart) {
    d.ranks.push_back(slowest);
    d.rank_notes.push_back("rank " + std::to_string(slowest) + " (the slowest)");
  }
  for (auto l = sc.setup.model.layers.rbegin(); l != sc.setup.model.layers.rend(); ++l)
    d.backward_layer_s.push_back(backward_seconds(*l, p.local_batch, sc.setup.device, sc.setup.compute));
  const std::string drawing = step_svg(trace.run, d);
  const std::string path = flags.has("output") ? flags.get("output") : "";
  if (path.empty()) {
    out << drawing;
    return 0;
  }
  if (!path.ends_with(".svg")) throw UsageError("--output: --scenario draws an SVG (FILE.svg), got '" + path + "'");
  write_file_atomically(path, [&](std::ostream& f) { f << drawing; });
  std::cerr << "wrote " << path << ": " << sc.name << "'s step on " << accelerators << " accelerators\n";
  return 0;
}

}  // namespace

int draw_command(std::span<char* const> args, std::ostream& out) {
  std::vector<char*> rest;  // -o spelled --output
  static char output_flag[] = "--output";
  for (char* a : args)
    rest.push_back(std::string_view(a) == "-o" ? output_flag : a);
  const Flags flags(draw_flags(), rest);
  if (flags.has("scenario")) return draw_step(flags, out);
  flags.refuse_unless("accelerators", false, "only with --scenario");
  const Collective collective = flags.parse("collective", [](const std::string& v) { return parse_collective(v); });
  // without --algorithm: the ring where the collective has one, else its first registered algorithm (all-to-all's
  // direct sends)
  const auto first_of = [](Collective c) -> const AlgorithmInfo& {
    const AlgorithmInfo* first = nullptr;
    for (const AlgorithmInfo& a : algorithms()) {
      if (a.collective != c) continue;
      if (a.name == "ring") return a;
      if (first == nullptr) first = &a;
    }
    return first != nullptr ? *first : find_algorithm("ring", c);  // (the last throws, naming what there is)
  };
  const AlgorithmInfo& algorithm = flags.has("algorithm")
                                       ? flags.parse("algorithm",
                                                     [collective](const std::string& v) -> const AlgorithmInfo& {
                                                       return find_algorithm(v, collective);
                                                     })
                                       : first_of(collective);
  RunSettings settings = parse_run_settings(flags);
  check_option_flags(flags, std::array{&algorithm});
  const bool summary = flags.has("summary");
  std::optional<ClusterInstance> cluster;
  int ranks = static_cast<int>(flags.integer("ranks", 2, summary ? 4096 : max_drawn_ranks * 64));
  if (settings.cluster) {
    if (flags.has("ranks")) throw UsageError("--ranks: not with --cluster (use --nodes)");
    cluster = instantiate_cluster(settings, parse_nodes(flags, *settings.cluster));
    ranks = cluster->topology->accelerators();
  }
  // (what set the ranks: --ranks, or the cluster's accelerators at --nodes)
  const std::string ranks_flag = settings.cluster ? (flags.has("nodes") ? "--nodes" : "--cluster") : "--ranks";
  if (!summary && ranks > max_drawn_ranks) {
    throw UsageError(ranks_flag + ": " + std::to_string(ranks) + " ranks are too many to draw rank by rank (at most " +
                     std::to_string(max_drawn_ranks) + "); --summary draws the rounds as a chart instead");
  }
  const std::uint64_t bytes = flags.bytes("bytes", 0, max_buffer_bytes);
  AlgorithmOptions options = settings.algorithm;
  options.root = static_cast<std::uint32_t>(flags.integer("root", 0, ranks - 1));
  const std::vector<double> values = parse_values(flags, ranks);
  if (summary && !values.empty()) throw UsageError("--values: not with --summary (no buffers are drawn)");
  const Schedule schedule = build_schedule(algorithm, ranks, bytes, options);
  if (const std::uint64_t pairs = communicating_pairs(schedule); pairs > max_drawn_pairs) {
    throw UsageError((flags.has("servers") ? std::string("--servers") : ranks_flag) + ": " +
                     std::string(algorithm.name) + " on " + std::to_string(ranks) + " ranks" +
                     (flags.has("servers") ? " with " + flags.get("servers") + " servers" : "") + " sends between " +
                     std::to_string(pairs) + " pairs of ranks, each followed round by round (about " +
                     format_bytes(pairs * 500) + " of memory); a drawing follows at most " +
                     std::to_string(max_drawn_pairs) + ": draw fewer ranks");
  }
  ScheduleRounds rounds;
  try {
    rounds = schedule_rounds(schedule, !summary);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--algorithm " + std::string(algorithm.name) + " on " + std::to_string(ranks) +
                     " ranks: " + e.what());
  }
  DrawingRequest request;
  request.title = std::string(algorithm.name) + " " + to_string(collective) + ", " + std::to_string(ranks) +
                  " ranks, " + format_bytes(bytes) + " per rank (" + std::to_string(rounds.rounds) + " rounds)";
  request.layout = layout_for(std::string(algorithm.name), ranks);
  request.root = static_cast<int>(options.root);
  request.values = values;
  if (options.has(ranks_per_node_option.name)) {
    request.ranks_per_node = static_cast<int>(options.number(ranks_per_node_option));
  }
  if (cluster) request.ranks_per_node = settings.cluster->node.accelerators;
  const std::string path = flags.has("output") ? flags.get("output") : "";
  const bool html = path.ends_with(".html");
  if (!path.empty() && !html && !path.ends_with(".svg")) {
    throw UsageError("--output: expected a FILE.svg or FILE.html, got '" + path + "'");
  }
  if (flags.choice("times", {"on", "off"}) == "on" && !summary) {
    if (settings.backend == "flow") {
      throw UsageError(
          "--backend: a drawing's rounds are timed on simgrid or analytical (the flow executor records "
          "no transfers)");
    }
    if (settings.backend == "auto") settings.backend = "simgrid";
    settings.record = true;
    const CollectiveRun run = run_schedule(schedule, settings, cluster ? &*cluster : nullptr);
    request.times = round_times(rounds, run.result.trace);
    request.timed_by = std::string(settings.backend == "simgrid" ? "SimGrid" : "the analytical executor") + " on " +
                       (cluster ? cluster->description
                                : "a star of " + format_bits_per_s(settings.cost.bandwidth_Bps) + " links, " +
                                      format_seconds(settings.cost.alpha_s) + " latency");
  }
  const std::string drawing = summary ? schedule_summary_svg(schedule, rounds, request)
                              : html  ? schedule_html(schedule, rounds, request)
                                      : schedule_svg(schedule, rounds, request);
  if (path.empty()) {
    out << drawing;
  } else {
    write_file_atomically(path, [&](std::ostream& file) { file << drawing; });
    std::cerr << "wrote " << path << ": " << rounds.rounds << " rounds of " << algorithm.name << " on " << ranks
              << " ranks\n";
  }
  return 0;
}

}  // namespace dtsim::cli
