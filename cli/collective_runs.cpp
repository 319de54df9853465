#include "cli/collective_runs.hpp"

#include "scenarios/units.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/simgrid_executor.hpp"

namespace dtsim::cli {

AlgorithmOptions parse_algorithm_options(const Flags& flags) {
  AlgorithmOptions options;
  options.servers = static_cast<std::uint32_t>(
      flags.parse("servers", [](const std::string& v) { return parse_integer(v, 1, 1000000); }));
  options.colocated_servers = flags.choice("ps-placement", {"hosts", "colocated"}) == "colocated";
  options.ranks_per_node = static_cast<std::uint32_t>(
      flags.parse("ranks-per-node", [](const std::string& v) { return parse_integer(v, 1, 1000000); }));
  options.inter_algorithm = flags.get("inter");
  options.segment_bytes = flags.parse("segment-size", [](const std::string& v) {
    const std::uint64_t bytes = parse_bytes(v);
    if (bytes == 0) throw std::invalid_argument("expected a size of at least 1 byte, got '" + v + "'");
    return bytes;
  });
  return options;
}

RunSettings parse_run_settings(const Flags& flags) {
  RunSettings settings;
  settings.cost.bandwidth_Bps = flags.parse("bandwidth", [](const std::string& v) { return parse_bandwidth_Bps(v); });
  settings.cost.alpha_s = flags.parse("latency", [](const std::string& v) { return parse_seconds(v); });
  settings.cost.reduce_Bps = flags.parse("reduce-rate", [](const std::string& v) { return parse_bandwidth_Bps(v); });
  settings.backend = flags.choice("backend", {"simgrid", "analytical"});
  settings.network_model = flags.choice("network-model", {"CM02", "LV08"});
  settings.algorithm = parse_algorithm_options(flags);
  return settings;
}

Schedule build_schedule(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                        const AlgorithmOptions& options) {
  try {
    return algorithm.build(ranks, bytes, options);
  } catch (const OptionError& e) {
    throw UsageError("--" + e.option + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--ranks: ") + e.what());
  }
}

CollectiveRun run_schedule(const Schedule& schedule, const RunSettings& settings) {
  CollectiveRun run;
  run.algorithm = schedule.algorithm;
  run.collective = to_string(schedule.collective);
  run.ranks = schedule.participants;
  run.helper_ranks = schedule.ranks - schedule.participants;
  run.bytes = schedule.bytes;
  run.backend = settings.backend;
  run.cost = settings.cost;
  if (settings.backend == "simgrid") {
    SimGridOptions sg;
    sg.cost = settings.cost;
    sg.network_model = settings.network_model == "CM02" ? NetworkModel::cm02 : NetworkModel::lv08;
    sg.real_payload = settings.real_payload;
    run.network_model = settings.network_model;
    run.result = run_simgrid(schedule, sg);
  } else {
    AnalyticalOptions an;
    an.cost = settings.cost;
    run.result = run_analytical(schedule, an);
  }
  run.closed_form_s =
      closed_form_seconds(run.collective, run.algorithm, run.ranks, run.bytes, settings.cost,
                          ClosedFormOptions{settings.algorithm.servers, settings.algorithm.colocated_servers,
                                            static_cast<int>(settings.algorithm.ranks_per_node),
                                            settings.algorithm.inter_algorithm, settings.algorithm.segment_bytes});
  return run;
}

}  // namespace dtsim::cli
