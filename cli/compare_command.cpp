// `dtsim compare`: every chosen algorithm over ranks x bytes, the winner of each row, and where winners change.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "algorithms/parameter_server.hpp"
#include "cli/collective_runs.hpp"
#include "cli/collective_sampling.hpp"
#include "cli/commands.hpp"
#include "cli/output_flags.hpp"
#include "cli/shipped_heldout.hpp"
#include "cli/sweep.hpp"
#include "reports/csv_table.hpp"
#include "reports/format.hpp"
#include "reports/grounding.hpp"
#include "reports/progress.hpp"
#include "reports/result_csv.hpp"
#include "scenarios/units.hpp"
#include "sim/algorithm_choice.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 7> compare_own_flags{{
    {"collective", "NAME", "allreduce",
     "allreduce, reduce-scatter, allgather, broadcast, reduce, gather, scatter or all-to-all"},
    {"algorithms", "A,B,...", "ring,tree,butterfly,rabenseifner,ps,direct",
     "algorithms of the collective to compare (default for the others than allreduce: all of its algorithms; sharp "
     "joins the allreduces on a cluster whose fabric.sharp is true)"},
    {"ranks", "LIST", "2,4,...,64", "rank counts: a list, where a,b,...,z steps geometrically by b/a and a,...,z by 2"},
    {"bytes", "LIST", "1KB,...,1GB",
     "buffer sizes, 0B to 1TiB each: a list, where a,b,...,z steps by b/a and a,...,z by 10"},
    {"json", "", "", "print a JSON array with one object per (algorithm, ranks, bytes)"},
    {"nodes", "LIST", "from the file", "--cluster: node counts, a list like --ranks (ranks = nodes x accelerators)"},
    {"resume", "FILE", "",
     "append each finished configuration to FILE as a JSON line; rerun the same command to skip those already "
     "there (also under mpirun -n K, which splits the configurations over K processes)"},
}};

const std::vector<FlagSpec>& compare_flags() {
  static const std::vector<FlagSpec> flags = [] {
    const std::vector<FlagSpec> run = run_flags();
    return concat_flags({compare_own_flags, collective_sampling_flags, csv_flags, cluster_flags, run});
  }();
  return flags;
}

std::string cell(const CollectiveRun& run) {
  std::ostringstream out;
  out << format_seconds(run.result.time_s) << " (" << format_rate_Bps(busbw_Bps(run)) << ")";
  return out.str();
}

}  // namespace

const char* compare_usage() {
  static const std::string text =
      "usage: dtsim compare [flags]\n"
      "Times every chosen algorithm of a collective (allreduce by default) for each (ranks, bytes) on a star network\n"
      "or a cluster, marks the fastest with *,\n"
      "and lists for each rank count the sizes between which the winner changes. Cells: time (bus bandwidth).\n\n" +
      flags_help(compare_flags());
  return text.c_str();
}

int compare_command(std::span<char* const> args, std::ostream& out) {
  const Flags flags(compare_flags(), args);
  const Collective collective = flags.parse("collective", [](const std::string& v) { return parse_collective(v); });
  std::string every_algorithm;  // the default list of a collective other than allreduce
  for (const AlgorithmInfo& a : algorithms()) {
    if (a.collective == collective) every_algorithm += (every_algorithm.empty() ? "" : ",") + std::string(a.name);
  }
  auto parse_algorithms = [collective](const std::string& v) {
    std::vector<const AlgorithmInfo*> list;
    for (const std::string& name : split(v)) {
      const AlgorithmInfo* algorithm = &find_algorithm(name, collective);
      if (std::find(list.begin(), list.end(), algorithm) != list.end()) {
        throw std::invalid_argument("'" + name + "' given twice in '" + v + "'");
      }
      list.push_back(algorithm);
    }
    if (list.empty()) throw std::invalid_argument("expected at least one algorithm");
    return list;
  };
  std::vector<const AlgorithmInfo*> chosen = collective == Collective::allreduce || flags.has("algorithms")
                                                 ? flags.parse("algorithms", parse_algorithms)
                                                 : parse_algorithms(every_algorithm);
  auto ranks = flags.parse("ranks", [](const std::string& v) {
    return parse_list<int>(
        v, [](const std::string& one) { return static_cast<int>(parse_integer(one, 1, 1000000)); }, 2.0);
  });
  const auto sizes = flags.parse("bytes", [](const std::string& v) {
    return parse_list<std::uint64_t>(
        v, [](const std::string& one) { return parse_bytes(one, 0, max_buffer_bytes); }, 10.0);
  });
  const bool csv = csv_output(flags);
  RunSettings settings = parse_run_settings(flags);
  // a cluster whose fabric's switches reduce: SHARP joins the default allreduces
  if (collective == Collective::allreduce && !flags.has("algorithms") && settings.cluster &&
      settings.cluster->fabric.sharp) {
    chosen.push_back(&find_algorithm("sharp"));
  }
  check_option_flags(flags, chosen);
  settings.auto_record = false;           // a sweep: no link lists
  std::vector<ClusterInstance> clusters;  // one per rank count with --cluster
  std::vector<int> nodes;                 // of each cluster
  if (settings.cluster) {
    if (flags.has("ranks")) {
      throw UsageError("--ranks: not with --cluster (the ranks are the cluster's accelerators; use --nodes)");
    }
    nodes = flags.has("nodes")
                ? flags.parse(
                      "nodes",
                      [](const std::string& v) {
                        return parse_list<int>(
                            v, [](const std::string& one) { return static_cast<int>(parse_integer(one, 1, 1 << 20)); },
                            2.0);
                      })
                : std::vector<int>{settings.cluster->nodes};
    ranks.clear();
    for (int n : nodes) {
      clusters.push_back(instantiate_cluster(settings, n));
      ranks.push_back(clusters.back().topology->accelerators());
    }
  }

  // --samples: each configuration's time is the mean over ranks arriving apart (its distribution in the JSON)
  const ArrivalSampling arrivals = parse_arrival_sampling(flags);
  const std::optional<HeldoutErrors> heldout = shipped_heldout();
  const auto timed_call = [&](const AlgorithmInfo& algorithm, int p, std::uint64_t bytes, const RunSettings& s,
                              const ClusterInstance* cluster) {
    check_samples_buildable(algorithm, p, bytes, settings.algorithm, arrivals, s);
    CollectiveRun run = run_call(algorithm, p, bytes, settings.algorithm, s, cluster);
    add_arrival_samples(run, algorithm, p, bytes, settings.algorithm, s, cluster, arrivals);
    if (run.distribution.samples > 0) {
      run.arrival = arrivals.text;
      run.result.time_s = run.distribution.mean_s;
    }
    return run;
  };
  // runs[(p * sizes + b) * algorithms + a], one configuration each, split over the processes of an MPI job
  Sweep sweep(flags.has("resume") ? flags.get("resume") : "", sweep_signature("compare", args));
  const std::size_t per_rank_count = sizes.size() * chosen.size();
  const auto configuration = [&](std::size_t c) {
    return std::tuple{c / per_rank_count, sizes[(c / chosen.size()) % sizes.size()], chosen[c % chosen.size()]};
  };
  const std::vector<nlohmann::json> records = sweep.run(
      ranks.size() * per_rank_count,
      [&](std::size_t c) {
        const auto [i, bytes, algorithm] = configuration(c);
        return to_record(timed_call(*algorithm, ranks[i], bytes, settings, clusters.empty() ? nullptr : &clusters[i]));
      },
      [&](std::size_t c) {
        const auto [i, bytes, algorithm] = configuration(c);
        return std::string(algorithm->name) + ", " + std::to_string(ranks[i]) + " ranks, " + format_bytes(bytes);
      });
  if (!sweep.is_root()) return 0;  // rank 0 of an MPI job reports
  std::vector<CollectiveRun> runs;
  for (const nlohmann::json& record : records) {
    runs.push_back(collective_run_from_record(record));
    attach_trust(runs.back(), heldout ? &*heldout : nullptr);  // (how far to trust a library's call)
  }
  auto at = [&](std::size_t p, std::size_t b, std::size_t a) -> const CollectiveRun& {
    return runs[(p * sizes.size() + b) * chosen.size() + a];
  };
  // --algorithm auto's choice for each (ranks, bytes): the library's (or MPI's) own, run here too when it is not among
  // the compared algorithms
  std::vector<CollectiveRun> choices;
  for (std::size_t p = 0; p < ranks.size(); ++p) {
    const ClusterInstance* cluster = clusters.empty() ? nullptr : &clusters[p];
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      const CallChoice choice = choose_call(collective, ranks[p], sizes[b], settings.algorithm, settings, cluster);
      const auto a =
          static_cast<std::size_t>(std::find(chosen.begin(), chosen.end(), choice.algorithm) - chosen.begin());
      const bool compared =
          a < chosen.size() && (choice.settings.protocol_automatic || at(p, b, a).protocol == choice.settings.protocol);
      CollectiveRun run =
          compared ? at(p, b, a) : timed_call(*choice.algorithm, ranks[p], sizes[b], choice.settings, cluster);
      run.chosen_by = choice.chosen_by;
      run.weighed = choice.weighed;
      attach_trust(run, heldout ? &*heldout : nullptr);
      choices.push_back(std::move(run));
    }
  }
  auto choice_at = [&](std::size_t p, std::size_t b) -> const CollectiveRun& { return choices[p * sizes.size() + b]; };
  auto winner = [&](std::size_t p, std::size_t b) {
    std::size_t best = 0;
    for (std::size_t a = 1; a < chosen.size(); ++a) {
      if (at(p, b, a).result.time_s < at(p, b, best).result.time_s) best = a;
    }
    return best;
  };
  // Within this fraction of the fastest is a tie: below what the model can tell apart (its validation errs by several
  // percent), so a winner is not replaced by one that beats it by less.
  constexpr double tie_fraction = 0.005;
  auto tied = [&](std::size_t p, std::size_t b, std::size_t a) {
    return at(p, b, a).result.time_s <= (1 + tie_fraction) * at(p, b, winner(p, b)).result.time_s;
  };

  if (flags.has("json")) {
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t i = 0; i < runs.size(); ++i) {
      nlohmann::json j = collective_json(runs[i]);
      j["auto_choice"] = choices[i / chosen.size()].algorithm;  // --algorithm auto's choice for this (ranks, bytes)
      all.push_back(std::move(j));
    }
    out << all.dump() << '\n';
    return 0;
  }
  if (csv) {  // one row per (ranks, bytes, algorithm), in the order of the JSON array
    std::vector<std::string> columns;
    if (!clusters.empty()) columns.emplace_back("nodes");
    for (std::string& c : collective_csv_columns())
      columns.push_back(std::move(c));
    columns.emplace_back("auto_choice");
    columns.emplace_back("fastest");
    CsvTable table(std::move(columns));
    for (std::size_t p = 0; p < ranks.size(); ++p) {
      for (std::size_t b = 0; b < sizes.size(); ++b) {
        const std::size_t best = winner(p, b);
        for (std::size_t a = 0; a < chosen.size(); ++a) {
          std::vector<std::string> cells;
          if (!clusters.empty()) cells.push_back(csv_integer(nodes[p]));
          for (std::string& c : collective_csv_cells(at(p, b, a)))
            cells.push_back(std::move(c));
          cells.push_back(choice_at(p, b).algorithm);
          cells.push_back(csv_bool(a == best));
          table.add_row(std::move(cells));
        }
      }
    }
    out << table.str();
    return 0;
  }

  if (clusters.empty()) {
    out << to_string(collective) << " on a star: " << format_bits_per_s(settings.cost.bandwidth_Bps)
        << " per host, latency " << format_seconds(settings.cost.alpha_s) << ", gap "
        << format_seconds(settings.cost.gap_s) << " a message, reduce " << format_rate_Bps(settings.cost.reduce_Bps);
  } else {  // each row's node count is in its own column
    std::string node_list;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      node_list += (i == 0 ? "" : ", ") + std::to_string(nodes[i]);
    out << to_string(collective) << " on cluster " << cluster_description(settings, node_list);
  }
  out << ", backend " << settings.backend;
  if (settings.backend == "auto") {
    out << " (simgrid up to " << auto_flow_above_ranks << " ranks and a million operations, flow above)";
  }
  if (settings.backend == "simgrid") out << " (" << settings.network_model << ")";
  if (std::any_of(chosen.begin(), chosen.end(), [](const AlgorithmInfo* a) { return a->name == "ps"; })) {
    const std::uint64_t servers = settings.algorithm.number(ps_servers_option);
    out << "\nps: " << servers << (servers == 1 ? " server" : " servers")
        << (settings.algorithm.text(ps_placement_option) == "colocated" ? " on the first ranks (colocated)"
                                                                        : " on hosts of their own")
        << (settings.cluster && !flags.has("ps-placement") ? ", the default with --cluster" : "")
        << " (--servers, --ps-placement)";
  }
  out << "\ncells: time (bus bandwidth); * the fastest, = within 0.5% of it (a tie)\n";
  if (arrivals.samples > 0) {
    out << "times: the mean of " << arrivals.samples << " runs with the ranks arriving " << arrivals.text
        << " apart (seed " << arrivals.seed << "; --json has each one's p50, p90, p99 and histogram)\n";
  }
  if (const auto in_library =
          std::find_if(runs.begin(), runs.end(), [](const CollectiveRun& r) { return r.protocol != Protocol::none; });
      in_library != runs.end()) {
    out << "each cell as the cluster's " << in_library->library
        << " library runs it: the protocol its tuner picks, rings across nodes in a channel per NIC (--csv and --json "
           "list both; --protocol forces one)\n";
  }
  if (settings.cluster && *std::max_element(nodes.begin(), nodes.end()) > 1) {
    if (const std::string note = plain_messages_note(*settings.cluster); !note.empty()) out << note << '\n';
  }
  if (settings.backend == "analytical") {
    out << "analytical backend: no link sharing, so algorithms that send many messages at once (direct) look faster\n"
           "than any real network runs them; use --backend simgrid to see the contention\n";
  }
  out << '\n';
  constexpr int width = 26;
  out << std::left;
  if (!clusters.empty()) out << std::setw(7) << "nodes";
  out << std::setw(7) << "ranks" << std::setw(10) << "bytes";
  for (const AlgorithmInfo* algorithm : chosen)
    out << std::setw(width) << algorithm->name;
  // every rule that chose a cell (a library's fixed algorithm files for some sizes, its tuner for the others)
  std::vector<std::string> seen;
  std::string rules;
  for (const CollectiveRun& c : choices) {
    if (std::find(seen.begin(), seen.end(), c.chosen_by) != seen.end()) continue;
    rules += (seen.empty() ? "" : " or ") + c.chosen_by;
    seen.push_back(c.chosen_by);
  }
  out << "auto (" << rules << ")\n";
  std::size_t auto_slower = 0;
  for (std::size_t p = 0; p < ranks.size(); ++p) {
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      if (!clusters.empty()) out << std::setw(7) << nodes[p];
      out << std::setw(7) << ranks[p] << std::setw(10) << format_bytes(sizes[b]);
      const std::size_t best = winner(p, b);
      for (std::size_t a = 0; a < chosen.size(); ++a) {
        out << std::setw(width) << cell(at(p, b, a)) + (a == best ? " *" : tied(p, b, a) ? " =" : "");
      }
      const CollectiveRun& choice = choice_at(p, b);
      const double fastest_s = at(p, b, best).result.time_s;
      const double slower = fastest_s > 0 ? choice.result.time_s / fastest_s - 1 : 0;
      out << choice.algorithm << ' ';
      if (choice.protocol != Protocol::none) out << to_string(choice.protocol) << ' ';
      out << format_seconds(choice.result.time_s);
      if (slower > tie_fraction) {
        ++auto_slower;
        out << " (+" << std::fixed << std::setprecision(0) << 100 * slower << "%)" << std::defaultfloat
            << std::setprecision(6);
      } else {
        out << (slower < -tie_fraction ? " (faster)" : " (best)");
      }
      out << '\n';
    }
  }
  out << "\nauto: what --algorithm auto runs, chosen by " << rules
      << " as the library would (not by timing them); +N%: slower than the fastest compared, in " << auto_slower
      << " of " << choices.size() << " cells\n";
  out << "\ncrossovers\n";
  for (std::size_t p = 0; p < ranks.size(); ++p) {
    out << "  ";
    if (!clusters.empty()) out << nodes[p] << " nodes, ";
    out << ranks[p] << " ranks: ";
    bool any = false;
    std::size_t leader = winner(p, 0);  // kept while it ties the fastest
    for (std::size_t b = 0; b + 1 < sizes.size(); ++b) {
      if (tied(p, b + 1, leader)) continue;
      const std::size_t to = winner(p, b + 1);
      out << (any ? "; " : "") << chosen[leader]->name << " -> " << chosen[to]->name << " between "
          << format_bytes(sizes[b]) << " and " << format_bytes(sizes[b + 1]);
      leader = to;
      any = true;
    }
    if (!any) out << chosen[leader]->name << " is fastest (or within 0.5%) at every size";
    out << '\n';
  }
  return 0;
}

}  // namespace dtsim::cli
