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
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "reports/schedule_drawing.hpp"
#include "scenarios/units.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 10> draw_own_flags{{
    {"nodes", "N", "from the file", "--cluster: number of nodes (ranks = nodes x accelerators per node)"},
    {"collective", "NAME", "allreduce",
     "allreduce, reduce-scatter, allgather, broadcast, reduce, gather, scatter or all-to-all"},
    {"algorithm", "NAME", "ring", "the algorithm to draw (any of dtsim collective's)"},
    {"ranks", "P", "8", "ranks, 2 to 64 drawn rank by rank (up to 4096 with --summary)"},
    {"bytes", "SIZE", "1MB", "buffer size per rank (labels the arrows; the picture's shape does not depend on it)"},
    {"root", "RANK", "0", "broadcast, reduce, gather and scatter: the root rank"},
    {"values", "V1,...,VP", "",
     "a number per rank: each chunk shows the sum of the numbers it holds, each arrow the sum it carries"},
    {"output", "FILE", "(SVG on standard output)",
     "FILE.svg: every round in a grid; FILE.html: one round at a time, previous, next and play (also -o FILE); "
     "written atomically"},
    {"summary", "", "", "draw the rounds as a chart of bytes moved per round instead of rank by rank (large P)"},
    {"times", "ON|OFF", "on", "time each round on SimGrid over the network flags' star (or --cluster)"},
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

int draw_command(std::span<char* const> args, std::ostream& out) {
  std::vector<char*> rest;  // -o spelled --output
  static char output_flag[] = "--output";
  for (char* a : args)
    rest.push_back(std::string_view(a) == "-o" ? output_flag : a);
  const Flags flags(draw_flags(), rest);
  const Collective collective = flags.parse("collective", [](const std::string& v) { return parse_collective(v); });
  const AlgorithmInfo& algorithm = flags.parse("algorithm", [collective](const std::string& v) -> const AlgorithmInfo& {
    return find_algorithm(v, collective);
  });
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
  if (!summary && ranks > max_drawn_ranks) {
    throw UsageError("--ranks: " + std::to_string(ranks) + " ranks are too many to draw rank by rank (at most " +
                     std::to_string(max_drawn_ranks) + "); --summary draws the rounds as a chart instead");
  }
  const std::uint64_t bytes = flags.bytes("bytes", 0, max_buffer_bytes);
  AlgorithmOptions options = settings.algorithm;
  options.root = static_cast<std::uint32_t>(flags.integer("root", 0, ranks - 1));
  const std::vector<double> values = parse_values(flags, ranks);
  if (summary && !values.empty()) throw UsageError("--values: not with --summary (no buffers are drawn)");
  const Schedule schedule = build_schedule(algorithm, ranks, bytes, options);
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
    settings.backend = "simgrid";
    settings.record = true;
    const CollectiveRun run = run_schedule(schedule, settings, cluster ? &*cluster : nullptr);
    request.times = round_times(rounds, run.result.trace);
    request.timed_by = "SimGrid on " + (cluster ? cluster->description
                                                : "a star of " + format_bits_per_s(settings.cost.bandwidth_Bps) +
                                                      " links, " + format_seconds(settings.cost.alpha_s) + " latency");
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
