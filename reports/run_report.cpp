#include "reports/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "reports/format.hpp"
#include "sim/step_sampler.hpp"

namespace dtsim {

std::string format_long_duration(double seconds) {
  if (!std::isfinite(seconds)) return "never";
  if (seconds < 120) return format_fixed(seconds, seconds < 10 ? 1 : 0) + " s";
  if (seconds < 2 * 3600) return format_fixed(seconds / 60, seconds < 600 ? 1 : 0) + " min";
  if (seconds < 2 * 86400) return format_fixed(seconds / 3600, 1) + " h";
  return format_fixed(seconds / 86400, 1) + " d";
}

std::string run_text(const std::vector<RunRow>& rows, const std::string& length_text) {
  const bool any_sampled =
      std::any_of(rows.begin(), rows.end(), [](const RunRow& r) { return !r.outlook.sampled_wall_s.empty(); });
  const int wall_width = any_sampled ? 22 : 11;
  std::ostringstream out;
  out << "\nThe whole run (" << length_text
      << "; failures and checkpoints: docs/goodput.md; interval = work between checkpoints):\n";
  out << std::left << std::setw(6) << "accel" << std::setw(15) << "algorithm" << std::setw(10) << "MTBF"
      << std::setw(19) << "checkpoint" << std::setw(10) << "interval" << std::setw(22) << "(Young, Daly)"
      << std::setw(15) << "interruptions" << std::setw(9) << "goodput" << std::setw(wall_width) << "wall time"
      << "samples trained\n";
  bool sampled = false;
  for (const RunRow& r : rows) {
    const RunOutlook& o = r.outlook;
    std::string checkpoint =
        format_bytes(static_cast<std::uint64_t>(o.checkpoint_bytes)) + " in " + format_long_duration(o.write_s);
    std::string classic = o.young_interval_s > 0 ? "(" + format_long_duration(o.young_interval_s) + ", " +
                                                       format_long_duration(o.daly_interval_s) + ")"
                                                 : "";
    std::string wall = format_long_duration(o.run.wall_s);
    if (!o.sampled_wall_s.empty()) {
      sampled = true;
      wall += " (p90 " + format_long_duration(summarize_steps(o.sampled_wall_s).p90_s) + ")";
    }
    out << std::setw(6) << r.accelerators << std::setw(15) << r.what << std::setw(10) << format_long_duration(o.mtbf_s)
        << std::setw(19) << checkpoint << std::setw(10) << format_long_duration(std::min(o.interval_s, o.run.work_s))
        << std::setw(22) << classic << std::setw(15)
        << (std::isfinite(o.run.expected_interruptions)
                ? format_fixed(o.run.expected_interruptions, o.run.expected_interruptions < 10 ? 1 : 0)
                : std::string("unbounded"))
        << std::setw(9) << format_percent(o.run.goodput) << std::setw(wall_width) << wall
        << format_count(r.useful_samples) << '\n';
  }
  out << "goodput = useful step time / wall time (the rest: checkpoint writes, restarts, work lost to failures)";
  if (sampled) out << "; p90 from Monte Carlo runs failure by failure";
  out << '\n';
  return out.str();
}

nlohmann::json run_json(const RunRow& row) {
  const RunOutlook& o = row.outlook;
  nlohmann::json j{{"failures_per_h", o.failures_per_h},
                   {"mtbf_s", std::isfinite(o.mtbf_s) ? nlohmann::json(o.mtbf_s) : nlohmann::json(nullptr)},
                   {"components",
                    {{"gpus", o.counts.gpus},
                     {"nodes", o.counts.nodes},
                     {"nics", o.counts.nics},
                     {"links", o.counts.links},
                     {"switches", o.counts.switches}}},
                   {"checkpoint_bytes", o.checkpoint_bytes},
                   {"checkpoint_write_s", o.write_s},
                   {"interval_s", std::isfinite(o.interval_s) ? nlohmann::json(o.interval_s) : nlohmann::json(nullptr)},
                   {"young_interval_s", o.young_interval_s},
                   {"daly_interval_s", o.daly_interval_s},
                   {"work_s", o.run.work_s},
                   {"wall_s", o.run.wall_s},
                   {"goodput", o.run.goodput},
                   {"expected_interruptions", o.run.expected_interruptions},
                   {"checkpoint_s", o.run.checkpoint_s},
                   {"restart_s", o.run.restart_s},
                   {"lost_s", o.run.lost_s},
                   {"useful_samples", row.useful_samples}};
  if (!o.sampled_wall_s.empty()) {
    const StepDistribution d = summarize_steps(o.sampled_wall_s);
    j["sampled_wall_s"] = {{"samples", d.samples}, {"p50_s", d.p50_s}, {"p90_s", d.p90_s}, {"p99_s", d.p99_s}};
  }
  return j;
}

}  // namespace dtsim
