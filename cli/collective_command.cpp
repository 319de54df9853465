// `dtsim collective` and `dtsim verify`: one collective schedule, checked and/or timed.
#include <array>
#include <iostream>
#include <optional>
#include <string>

#include "algorithms/registry.hpp"
#include "algorithms/verifier.hpp"
#include "cli/collective_runs.hpp"
#include "cli/collective_sampling.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "cli/output_flags.hpp"
#include "cli/shipped_heldout.hpp"
#include "reports/collective_report.hpp"
#include "reports/result_csv.hpp"
#include "scenarios/units.hpp"
#include "sim/algorithm_choice.hpp"

namespace dtsim::cli {
namespace {

// Refuses, before the schedule is built (2.1 GB for direct on 8192 ranks), what the verifier would refuse as too large,
// where that is known without building it (an all-pairs algorithm's chunks); `origin` names where the ranks came from.
void check_verifiable(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes, const AlgorithmOptions& options,
                      const std::string& origin) {
  const std::optional<AllPairs> pairs = algorithm.pairs(ranks, bytes, options);
  if (!pairs) return;
  if (std::string why = too_large_to_verify(static_cast<std::uint64_t>(ranks), pairs->chunk_count()); !why.empty()) {
    throw UsageError(origin + ": " + why + "; ask for fewer ranks or chunks");
  }
}

constexpr long long max_ranks = 1'000'000;

// The flags of `collective` and `verify` that say which schedule (--algorithm's text lists the registry's).
std::vector<FlagSpec> schedule_flags() {
  static const std::string algorithm_doc =
      "auto (the collective library's own choice on a cluster that names one, NCCL's tuner; elsewhere MPICH's "
      "thresholds: docs/clusters.md) or one by name: " +
      algorithm_flag_doc();
  return {
      {"collective", "NAME", "allreduce",
       "allreduce, reduce-scatter, allgather, broadcast, reduce, gather, scatter or all-to-all"},
      {"algorithm", "NAME", "auto", algorithm_doc},
      {"ranks", "P", "8",
       "number of ranks, 1 to 1000000 (ring on the simgrid or analytical backend: at most 8192, its 4P(P-1) ops "
       "written "
       "out must fit 2 GiB; the flow backend runs it compact; --verify: ranks x chunks x ranks state cells at most "
       "2^28, a ring of P chunks up to 645 ranks)"},
      {"bytes", "SIZE", "100MB",
       "buffer size per rank, 0B to 1TiB, e.g. 100MB, 64KiB (all-to-all: the rows of blocks of all P "
       "ranks together; each rank's row, nccl-tests' size, is SIZE/P)"},
      {"root", "RANK", "0", "broadcast, reduce, gather and scatter: the root rank"},
  };
}

constexpr std::array<FlagSpec, 5> collective_own_flags{{
    {"real-payload", "", "", "simgrid only: move and reduce real float buffers and check the exact sum"},
    {"verify", "", "", "also run the symbolic verifier on the schedule"},
    {"json", "", "", "print one JSON object instead of text"},
    {"trace", "FILE", "",
     "simgrid only: write the run's timeline as Chrome trace-event JSON (Perfetto, chrome://tracing): a track "
     "per rank (steps, reductions) and per busy link"},
    {"nodes", "N", "from the file", "--cluster: number of nodes (ranks = nodes x accelerators per node)"},
}};

const std::vector<FlagSpec>& collective_flags() {
  static const std::vector<FlagSpec> flags = [] {
    const std::vector<FlagSpec> schedule = schedule_flags(), run = run_flags();
    return concat_flags(
        {schedule, collective_own_flags, collective_sampling_flags, csv_flags, trace_flags, cluster_flags, run});
  }();
  return flags;
}

const std::vector<FlagSpec>& verify_flags() {
  static const std::vector<FlagSpec> flags = [] {
    const std::vector<FlagSpec> schedule = schedule_flags(), options = algorithm_option_flags();
    return concat_flags({schedule, options});
  }();
  return flags;
}

struct ScheduleRequest {
  Collective collective;
  const AlgorithmInfo* algorithm;  // nullptr: auto, chosen once the network is known
  int ranks;
  std::uint64_t bytes;
};

ScheduleRequest parse_schedule_request(const Flags& flags) {
  ScheduleRequest request{};
  const Collective collective = flags.parse("collective", [](const std::string& v) { return parse_collective(v); });
  request.collective = collective;
  request.algorithm = flags.parse("algorithm", [collective](const std::string& v) -> const AlgorithmInfo* {
    if (v == "auto") return nullptr;
    try {
      return &find_algorithm(v, collective);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(e.what()) + "; or auto");
    }
  });
  request.ranks = static_cast<int>(flags.integer("ranks", 1, max_ranks));
  request.bytes = flags.bytes("bytes", 0, max_buffer_bytes);
  return request;
}

// --root, which only the rooted collectives have.
std::uint32_t parse_root(const Flags& flags, const ScheduleRequest& request) {
  const auto root = static_cast<std::uint32_t>(flags.integer("root", 0, max_ranks - 1));
  const Collective c = request.collective;
  flags.refuse_unless(
      "root",
      c == Collective::broadcast || c == Collective::reduce || c == Collective::gather || c == Collective::scatter,
      "only broadcast, reduce, gather and scatter have a root (--collective " + std::string(to_string(c)) + ")");
  return root;
}

std::string usage_text(const char* head, std::span<const FlagSpec> specs) { return head + flags_help(specs); }

}  // namespace

const char* collective_usage() {
  static const std::string text = usage_text(
      "usage: dtsim collective [flags]\n"
      "Simulates one collective on a star network and prints its time, algorithm bandwidth (bytes/time) and bus\n"
      "bandwidth (algbw x 2(P-1)/P for allreduce, as nccl-tests define them).\n\n",
      collective_flags());
  return text.c_str();
}

const char* verify_usage() {
  static const std::string text = usage_text(
      "usage: dtsim verify [flags]\n"
      "Executes the schedule symbolically and proves that every send meets its receive, nothing deadlocks, and\n"
      "every rank ends with every chunk reduced from all ranks' contributions exactly once.\n\n",
      verify_flags());
  return text.c_str();
}

int collective_command(std::span<char* const> args, std::ostream& out) {
  const Flags flags(collective_flags(), args);
  const ScheduleRequest request = parse_schedule_request(flags);
  RunSettings settings = parse_run_settings(flags);
  if (request.algorithm != nullptr) check_option_flags(flags, std::array{request.algorithm});
  settings.real_payload = flags.has("real-payload");
  if ((settings.real_payload || flags.has("trace")) && settings.backend == "auto") settings.backend = "simgrid";
  if (settings.real_payload && settings.backend != "simgrid") {
    throw UsageError("--real-payload: needs --backend simgrid");
  }
  if (settings.real_payload && request.bytes % 4 != 0) {
    throw UsageError("--real-payload: --bytes must be a whole number of 4-byte floats, got " +
                     std::to_string(request.bytes));
  }
  const bool csv = csv_output(flags);
  const ArrivalSampling arrivals = parse_arrival_sampling(flags);
  if (csv && arrivals.samples > 0) throw UsageError("--samples: not with --csv (in the text and --json output)");
  const TraceRequest trace = parse_trace_request(flags);
  if (!trace.path.empty()) {
    if (settings.backend != "simgrid") throw UsageError("--trace: needs --backend simgrid");
    settings.record = true;
  }
  AlgorithmOptions options = settings.algorithm;
  options.root = parse_root(flags, request);
  if (settings.real_payload) options.element_bytes = 4;
  std::optional<ClusterInstance> cluster;
  int ranks = request.ranks;
  if (settings.cluster) {
    if (flags.has("ranks")) {
      throw UsageError("--ranks: not with --cluster (the ranks are the cluster's accelerators; use --nodes)");
    }
    cluster = instantiate_cluster(settings, parse_nodes(flags, *settings.cluster));
    ranks = cluster->topology->accelerators();
  }
  CallChoice choice;  // --algorithm auto
  if (request.algorithm == nullptr) {
    choice = choose_call(request.collective, ranks, request.bytes, options, settings, cluster ? &*cluster : nullptr);
    check_option_flags(flags, std::array{choice.algorithm});
  } else {
    choice.algorithm = request.algorithm;
    choice.settings = settings;
  }
  check_switch_helpers(*choice.algorithm, cluster ? &*cluster : nullptr);
  check_samples_buildable(*choice.algorithm, ranks, request.bytes, options, arrivals, choice.settings);
  // the schedule itself where --verify or --trace reads it (run_call builds its own, or none: an all-pairs algorithm
  // too large to write out runs without it)
  std::optional<Schedule> schedule;
  if (flags.has("verify") || !trace.path.empty()) {
    if (flags.has("verify")) {
      check_verifiable(*choice.algorithm, ranks, request.bytes, options, "--verify");
    }
    schedule = build_schedule(*choice.algorithm, ranks, request.bytes, options, cluster ? &*cluster : nullptr);
    check_trace_ranks(trace, schedule->ranks);
  }
  bool verified = false;
  if (flags.has("verify")) {
    const VerifyReport report = verify(*schedule);
    if (report.too_large) throw UsageError("--verify: " + report.error + "; ask for fewer ranks or chunks");
    if (!report.ok) {
      std::cerr << "dtsim collective: verification failed: " << report.error << '\n';
      return 1;
    }
    verified = true;
  }
  CollectiveRun run =
      run_call(*choice.algorithm, ranks, request.bytes, options, choice.settings, cluster ? &*cluster : nullptr);
  run.chosen_by = choice.chosen_by;
  run.weighed = choice.weighed;
  run.verified = verified;
  add_arrival_samples(run, *choice.algorithm, ranks, request.bytes, options, choice.settings,
                      cluster ? &*cluster : nullptr, arrivals);
  run.arrival = arrivals.text;
  const std::optional<HeldoutErrors> heldout = shipped_heldout();
  attach_trust(run, heldout ? &*heldout : nullptr);
  if (!trace.path.empty()) {
    write_trace_file(trace, run.result.trace, schedule->ranks, run.links,
                     run.algorithm + " " + run.collective + ", " + std::to_string(run.ranks) + " ranks, " +
                         std::to_string(run.bytes) + " B",
                     std::cerr);
  }

  if (flags.has("json")) {
    out << collective_json(run).dump() << '\n';
  } else if (csv) {
    out << collective_csv(run);
  } else {
    out << collective_text(run);
  }
  return run.result.payload_checked && !run.result.payload_ok ? 1 : 0;
}

int verify_command(std::span<char* const> args, std::ostream& out) {
  const Flags flags(verify_flags(), args);
  ScheduleRequest request = parse_schedule_request(flags);
  AlgorithmOptions options = parse_algorithm_options(flags);
  options.root = parse_root(flags, request);
  std::string chosen;
  if (request.algorithm == nullptr) {  // auto: as MPI would on a star (no network here)
    const AlgorithmChoice choice = choose_algorithm(request.collective, request.ranks, request.bytes, options, {});
    request.algorithm = choice.algorithm;
    chosen = " (chosen by " + choice.rule + ", --algorithm auto)";
  }
  check_option_flags(flags, std::array{request.algorithm});
  check_verifiable(*request.algorithm, request.ranks, request.bytes, options, "--ranks");
  const Schedule schedule = build_schedule(*request.algorithm, request.ranks, request.bytes, options);
  const VerifyReport report = verify(schedule);
  if (report.too_large) throw UsageError("--ranks: " + report.error + "; ask for fewer ranks or chunks");
  if (!report.ok) {
    out << request.algorithm->name << ": INVALID: " << report.error << '\n';
    return 1;
  }
  out << request.algorithm->name << chosen << ' ' << to_string(schedule.collective) << ", " << request.ranks
      << " ranks, " << request.bytes << " B: valid (" << report.messages << " messages, " << report.bytes_sent
      << " bytes sent, " << report.max_steps << " steps)\n";
  return 0;
}

}  // namespace dtsim::cli
