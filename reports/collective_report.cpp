#include "reports/collective_report.hpp"
#include "reports/distribution_json.hpp"

#include <cstdio>
#include <sstream>

#include "reports/format.hpp"
#include "reports/grounding.hpp"

namespace dtsim {

// nccl-tests count the bytes each rank holds; for all-to-all dtsim's buffer is the whole P x P exchange, of which
// each rank holds one row (bytes / P).
double algbw_Bps(const CollectiveRun& run) {
  if (run.result.time_s <= 0) return 0.0;
  const double per_rank = run.collective == "all-to-all" && run.ranks > 0 ? static_cast<double>(run.bytes) / run.ranks
                                                                          : static_cast<double>(run.bytes);
  return per_rank / run.result.time_s;
}

double busbw_Bps(const CollectiveRun& run) { return algbw_Bps(run) * bus_factor(run.collective, run.ranks); }

std::string collective_text(const CollectiveRun& run) {
  std::ostringstream out;
  out << run.algorithm << ' ' << run.collective << ": " << run.ranks << " ranks";
  if (run.helper_ranks > 0) {  // (the parameter server's own hosts; every other helper is a switch that reduces)
    out << " + " << run.helper_ranks << (run.algorithm == "ps" ? " server hosts" : " switch helpers");
  }
  out << ", " << format_bytes(run.bytes) << " (" << run.bytes << " B)";
  // all-to-all: the buffer holds every rank's row of blocks; nccl-tests' size is one row
  if (run.collective == "all-to-all" && run.ranks > 0) {
    out << ", " << format_bytes(run.bytes / static_cast<std::uint64_t>(run.ranks))
        << " a rank (its row of blocks: nccl-tests' size)";
  }
  out << '\n';
  if (!run.chosen_by.empty()) {
    out << "  chosen     by " << run.chosen_by << " (--algorithm auto; name one to force it)";
    for (std::size_t i = 0; i < run.weighed.size(); ++i) {
      const WeighedAlgorithm& w = run.weighed[i];
      out << (i == 0 ? ": " : ", ") << w.algorithm << ' ' << to_string(w.protocol) << ' '
          << format_seconds(w.estimate_s);
    }
    out << '\n';
  }
  if (run.cluster.empty()) {
    out << "  network    star, " << format_bits_per_s(run.cost.bandwidth_Bps) << " per host, latency "
        << format_seconds(run.cost.alpha_s) << ", gap " << format_seconds(run.cost.gap_s) << " a message, reduce "
        << format_rate_Bps(run.cost.reduce_Bps) << '\n';
  } else {
    out << "  cluster    " << run.cluster << '\n';
  }
  if (!run.note.empty()) out << "  note       " << run.note << '\n';
  if (run.protocol != Protocol::none) {
    out << "  library    " << run.library << ", protocol " << to_string(run.protocol) << ", " << run.channels
        << (run.channels == 1 ? " channel" : " channels") << '\n';
  }
  out << "  backend    " << run.backend;
  if (!run.network_model.empty()) out << " (" << run.network_model << ')';
  out << '\n';
  out << "  time       " << format_seconds(run.result.time_s) << '\n';
  if (run.distribution.samples > 0) {
    const StepDistribution& d = run.distribution;
    out << "  arriving   " << run.arrival << " apart, " << d.samples << " samples (seed " << d.seed << "): mean "
        << format_seconds(d.mean_s) << ", p50 " << format_seconds(d.p50_s) << ", p90 " << format_seconds(d.p90_s)
        << ", p99 " << format_seconds(d.p99_s) << '\n';
  }
  out << "  algbw      " << format_rate_Bps(algbw_Bps(run)) << '\n';
  out << "  busbw      " << format_rate_Bps(busbw_Bps(run)) << '\n';
  if (run.trust) {
    const ErrorBand& b = *run.trust;
    out << "  trust      80% of the " << b.rows << ' ' << run.trust_basis << " measured " << format_fixed(b.low(1.0), 2)
        << "x to " << format_fixed(b.high(1.0), 2) << "x the bus bandwidth dtsim predicted (median |error| "
        << format_percent(b.median_abs_error) << ")";
    if (run.ranks > b.max_devices) out << "; none was as large as " << run.ranks << " ranks";
    out << '\n';
  }
  out << "  messages   " << run.result.messages << " carrying " << format_bytes(run.result.bytes_sent) << '\n';
  if (run.closed_form_s >= 0) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.4f", run.closed_form_s > 0 ? run.result.time_s / run.closed_form_s : 1.0);
    out << "  formula    " << format_seconds(run.closed_form_s)
        << " without contention (simulated / formula = " << ratio << ")\n";
  }
  out << "  sim cost   " << format_seconds(run.result.wall_s) << " wall";
  if (run.result.setup_wall_s > 0) out << " (" << format_seconds(run.result.setup_wall_s) << " building the platform)";
  out << ", peak memory " << format_bytes(run.result.peak_rss_bytes);
  if (run.result.rank_classes > 0) {  // (flow executor: one rank simulated per class)
    out << "; ranks simulated as " << run.result.rank_classes << (run.result.rank_classes == 1 ? " class" : " classes")
        << " that run alike";
  }
  out << '\n';
  if (run.links_recorded) out << links_text(run.links, 5, run.result.time_s);
  if (run.verified) out << "  verified   every send meets its receive, no deadlock, each contribution reduced once\n";
  if (run.result.payload_checked) {
    out << "  payload    " << (run.result.payload_ok ? "exact result on every rank" : "WRONG RESULT")
        << " (max abs error " << run.result.payload_max_abs_error << ")\n";
  }
  return out.str();
}

// Network links in bits per second, as they are sold; the others (PCIe, NVLink, CPU) in bytes per second.
std::string format_capacity(const std::string& kind, double capacity_Bps) {
  const bool network = kind == "nic" || kind == "fabric" || kind == "global" || kind == "host";
  return network ? format_bits_per_s(capacity_Bps) : format_rate_Bps(capacity_Bps);
}

namespace {

// One group of links alike: its utilisation (and busy fraction, where recorded), bytes per link, and its one link's
// name or its count, kind and capacity.
std::string group_line(const LinkGroup& g, bool busy) {
  char line[96];
  if (busy) {
    std::snprintf(line, sizeof line, "util %5.1f%%  busy %5.1f%%  ", 100 * g.utilisation, 100 * g.busy_fraction);
  } else {
    std::snprintf(line, sizeof line, "util %5.1f%%  ", 100 * g.utilisation);
  }
  std::string text = std::string("    ") + line + format_bytes(g.bytes) + "  ";
  if (g.count == 1) return text + g.first + '\n';
  return text + std::to_string(g.count) + " x " + g.kind + " (" + format_capacity(g.kind, g.capacity_Bps) + "), e.g. " +
         g.first + '\n';
}

}  // namespace

std::string links_text(const std::vector<LinkUsage>& links, std::size_t most, double run_s) {
  const std::vector<LinkGroup> groups = group_links(links);
  std::ostringstream out;
  out << "  busiest links (of " << links.size() << " loaded, in " << groups.size()
      << (groups.size() == 1 ? " group" : " groups") << " of links alike, the most utilised first; util = bytes / "
      << "(capacity x " << format_seconds(run_s) << "), busy = some message crossing it; bytes per link)\n";
  for (std::size_t i = 0; i < groups.size() && i < most; ++i)
    out << group_line(groups[i], true);
  return out.str();
}

std::string step_link_groups_text(const std::vector<LinkGroup>& groups, double step_s) {
  std::ostringstream out;
  out << "  busiest links (in groups of links alike, the most utilised first; util = bytes a step / (capacity x "
      << format_seconds(step_s) << "); bytes per link a step)\n";
  for (const LinkGroup& g : groups)
    out << group_line(g, false);
  return out.str();
}

nlohmann::json links_json(const std::vector<LinkUsage>& links, std::size_t most) {
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < links.size() && i < most; ++i) {
    const LinkUsage& l = links[i];
    list.push_back({{"name", l.name},
                    {"kind", l.kind},
                    {"capacity_Bps", l.capacity_Bps},
                    {"bytes", l.bytes},
                    {"busy_s", l.busy_s},
                    {"busy_fraction", l.busy_fraction},
                    {"utilisation", l.utilisation}});
  }
  return list;
}

nlohmann::json link_groups_json(const std::vector<LinkUsage>& links, std::size_t most) {
  std::vector<LinkGroup> groups = group_links(links);
  groups.resize(std::min(groups.size(), most));
  return link_groups_json(groups);
}

nlohmann::json link_groups_json(const std::vector<LinkGroup>& groups) {
  nlohmann::json list = nlohmann::json::array();
  for (const LinkGroup& g : groups) {
    list.push_back({{"kind", g.kind},
                    {"count", g.count},
                    {"capacity_Bps", g.capacity_Bps},
                    {"bytes", g.bytes},
                    {"busy_fraction", g.busy_fraction},
                    {"utilisation", g.utilisation},
                    {"first", g.first}});
  }
  return list;
}

nlohmann::json collective_json(const CollectiveRun& run) {
  nlohmann::json j{{"algorithm", run.algorithm},
                   {"collective", run.collective},
                   {"ranks", run.ranks},
                   {"helper_ranks", run.helper_ranks},
                   {"bytes", run.bytes},
                   {"backend", run.backend},
                   {"time_s", run.result.time_s},
                   {"algbw_Bps", algbw_Bps(run)},
                   {"busbw_Bps", busbw_Bps(run)},
                   {"reduce_Bps", run.cost.reduce_Bps},
                   {"messages", run.result.messages},
                   {"bytes_sent", run.result.bytes_sent},
                   {"verified", run.verified},
                   {"sim_wall_s", run.result.wall_s},
                   {"sim_setup_wall_s", run.result.setup_wall_s},
                   {"sim_peak_rss_bytes", run.result.peak_rss_bytes}};
  if (run.backend == "flow") {  // what the flow executor simulated and what it skipped as repetitions
    j["sim_event_batches"] = run.result.event_batches;
    j["sim_skipped_steps"] = run.result.skipped_steps;
    j["sim_rank_classes"] = run.result.rank_classes;  // 0: every rank simulated
  }
  if (run.cluster.empty()) {
    j["alpha_s"] = run.cost.alpha_s;
    j["gap_s"] = run.cost.gap_s;
    j["bandwidth_Bps"] = run.cost.bandwidth_Bps;
  } else {
    j["cluster"] = run.cluster;
  }
  if (!run.network_model.empty()) j["network_model"] = run.network_model;
  if (run.trust) {
    const ErrorBand& b = *run.trust;
    j["trust"] = error_band_json(b);
    j["trust"]["basis"] = run.trust_basis;
    j["busbw_Bps_range"] = {b.low(busbw_Bps(run)), b.high(busbw_Bps(run))};
  }
  if (!run.chosen_by.empty()) {
    nlohmann::json weighed = nlohmann::json::array();
    for (const WeighedAlgorithm& w : run.weighed)
      weighed.push_back(
          {{"algorithm", w.algorithm}, {"protocol", to_string(w.protocol)}, {"estimate_s", w.estimate_s}});
    j["chosen_by"] = run.chosen_by;
    j["weighed"] = weighed;
  }
  if (run.distribution.samples > 0) {
    j["time_distribution"] = step_distribution_json(run.distribution);
    j["time_distribution"]["arrival"] = run.arrival;
  }
  if (!run.note.empty()) j["note"] = run.note;
  if (run.protocol != Protocol::none) {
    j["library"] = run.library;
    j["protocol"] = to_string(run.protocol);
    j["channels"] = run.channels;
  }
  if (run.links_recorded) {
    j["links"] = links_json(run.links, 20);
    j["link_groups"] = link_groups_json(run.links, 20);
  }
  if (run.closed_form_s >= 0) j["closed_form_s"] = run.closed_form_s;
  if (run.result.payload_checked) {
    j["payload_ok"] = run.result.payload_ok;
    j["payload_max_abs_error"] = run.result.payload_max_abs_error;
  }
  return j;
}

}  // namespace dtsim
