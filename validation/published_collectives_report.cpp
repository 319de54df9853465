#include <cmath>
#include <cstdio>

#include "validation/published_report.hpp"

namespace dtsim {

std::string collectives_text(const CollectiveValidation& result, const std::string& split) {
  std::string out = "published collectives (validation/published/collectives.csv), split " + split + ": " +
                    std::to_string(result.cases.size()) + " rows, " + std::to_string(result.overall.rows) +
                    " predicted (bus bandwidth, predicted against measured)\n";
  out += "overall: " + stats_line(result.overall) + "\nby size:\n";
  for (const auto& [band, s] : result.by_band)
    out += "  " + band + ": " + stats_line(s) + "\n";
  out += "by cluster:\n";
  for (const auto& [name, s] : result.by_system)
    out += "  " + name + ": " + stats_line(s) + "\n";
  out += "rows:\n";
  for (const CollectiveCase& c : result.cases) {
    char line[512];
    if (!c.not_modelled.empty()) {
      std::snprintf(line, sizeof line, "  %-34s not modelled: %s\n", c.row.id.c_str(), c.not_modelled.c_str());
    } else {
      std::snprintf(line, sizeof line, "  %-34s %+7.1f%%  %9.2f against %9.2f GB/s  (%s, %s, %d %s)\n",
                    c.row.id.c_str(), 100 * c.error, c.predicted_busbw_GBps, c.measured_busbw_GBps, c.algorithm.c_str(),
                    to_string(c.protocol), c.channels, c.channels == 1 ? "channel" : "channels");
    }
    out += line;
  }
  if (!result.implied_launch_us.empty()) {
    out += "launch implied by the fit rows up to 64 KiB (median of measured - predicted without launch):\n";
    for (const auto& [name, us] : result.implied_launch_us) {
      char line[256];
      std::snprintf(line, sizeof line, "  %s: %.1f us\n", name.c_str(), us);
      out += line;
    }
  }
  if (!result.implied_net_latency_factor.empty()) {
    out += "library.net_latency_factor implied by the multi-node allreduce fit rows up to 64 MiB (median):\n";
    for (const auto& f : result.implied_net_latency_factor) {
      char line[256];
      std::snprintf(line, sizeof line, "  %s: %.2f (%d %s)\n", f.cluster.c_str(), f.factor, f.rows,
                    f.rows == 1 ? "row" : "rows");
      out += line;
    }
  }
  return out;
}

nlohmann::json collectives_json(const CollectiveValidation& result, const std::string& split) {
  nlohmann::json cases = nlohmann::json::array();
  for (const CollectiveCase& c : result.cases) {
    nlohmann::json j{{"id", c.row.id},
                     {"split", c.row.split},
                     {"size_bytes", c.row.size_bytes},
                     {"measured_busbw_GBps", c.measured_busbw_GBps}};
    if (!c.not_modelled.empty()) {
      j["not_modelled"] = c.not_modelled;
    } else {
      j.update({{"cluster", c.cluster},
                {"algorithm", c.algorithm},
                {"protocol", to_string(c.protocol)},
                {"channels", c.channels},
                {"predicted_busbw_GBps", c.predicted_busbw_GBps},
                {"predicted_time_us", c.predicted_time_us},
                {"error", c.error}});
    }
    cases.push_back(std::move(j));
  }
  nlohmann::json bands = nlohmann::json::object(), systems = nlohmann::json::object();
  for (const auto& [band, s] : result.by_band)
    bands[band] = stats_json(s);
  for (const auto& [name, s] : result.by_system)
    systems[name] = stats_json(s);
  return {{"split", split},
          {"overall", stats_json(result.overall)},
          {"by_size", bands},
          {"by_cluster", systems},
          {"cases", cases}};
}

}  // namespace dtsim
