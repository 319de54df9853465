#include "cli/collective_sampling.hpp"

#include <chrono>
#include <cmath>
#include <vector>

#include "models/variability.hpp"
#include "reports/format.hpp"
#include "scenarios/units.hpp"
#include "sim/executor.hpp"
#include "sim/network.hpp"

namespace dtsim::cli {

ArrivalSampling parse_arrival_sampling(const Flags& flags) {
  ArrivalSampling a;
  if (!flags.has("samples") && !flags.has("arrival")) {
    flags.refuse_unless("seed", false, "needs --samples and --arrival");
    return a;
  }
  if (!flags.has("arrival")) throw UsageError("--samples: needs --arrival (how late each rank arrives)");
  if (!flags.has("samples")) throw UsageError("--arrival: needs --samples N");
  a.samples = static_cast<int>(flags.integer("samples", 1, 100000));
  a.seed = static_cast<std::uint64_t>(flags.integer("seed", 0, INT64_MAX));
  a.text = flags.get("arrival");
  const std::size_t colon = a.text.find(':');
  const std::string kind = a.text.substr(0, colon);
  const std::string what = "expected normal:SIGMA, uniform:MAX or exponential:MEAN with a duration, e.g. normal:20us";
  if (colon == std::string::npos) throw UsageError("--arrival: " + what + ", got '" + a.text + "'");
  if (kind == "normal") {
    a.kind = ArrivalSampling::Kind::half_normal;
  } else if (kind == "uniform") {
    a.kind = ArrivalSampling::Kind::uniform;
  } else if (kind == "exponential") {
    a.kind = ArrivalSampling::Kind::exponential;
  } else {
    throw UsageError("--arrival: " + what + ", got '" + a.text + "'");
  }
  a.scale_s =
      flags.parse("arrival", [&](const std::string&) { return parse_seconds(a.text.substr(colon + 1), 1e-12, 1); });
  return a;
}

StepDistribution sample_arrivals(const Schedule& schedule, const RunSettings& settings, const ClusterInstance* cluster,
                                 const ArrivalSampling& sampling) {
  RunSettings quiet = settings;
  quiet.record = false;
  quiet.auto_record = false;
  const double flops_per_s = NetworkCost{}.compute_flops_per_s;  // (the executors' speed of Compute ops)
  std::vector<double> steps;
  std::vector<double> flops(static_cast<std::size_t>(schedule.ranks));
  for (int s = 0; s < sampling.samples; ++s) {
    for (int r = 0; r < schedule.ranks; ++r) {
      const auto sample = static_cast<std::uint64_t>(s), rank = static_cast<std::uint64_t>(r);
      double delay = 0;
      switch (sampling.kind) {
        case ArrivalSampling::Kind::half_normal:
          delay = std::abs(counter_normal(sampling.seed, sample, rank, 0, 0)) * sampling.scale_s;
          break;
        case ArrivalSampling::Kind::uniform:
          delay = counter_uniform(sampling.seed, sample, rank, 0, 0) * sampling.scale_s;
          break;
        case ArrivalSampling::Kind::exponential:
          delay = -std::log1p(-counter_uniform(sampling.seed, sample, rank, 0, 0)) * sampling.scale_s;
          break;
      }
      flops[static_cast<std::size_t>(r)] = delay * flops_per_s;
    }
    const auto started = std::chrono::steady_clock::now();
    steps.push_back(run_schedule(with_arrivals(schedule, flops), quiet, cluster).result.time_s);
    if (s == 0 && !settings.force) {  // the first sample's wall time, times all of them: refused when too long
      const double each_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const double all_s = each_s * sampling.samples;
      if (all_s > simgrid_time_limit_s) {
        throw UsageError("--samples: " + std::to_string(sampling.samples) + " samples would take about " +
                         format_seconds(all_s) + " (" + format_seconds(each_s) + " each), above the " +
                         format_seconds(simgrid_time_limit_s) +
                         " limit: ask for fewer samples or ranks, or --force to run them anyway");
      }
    }
  }
  StepDistribution d = summarize_steps(std::move(steps));
  d.seed = sampling.seed;
  d.sampler = Sampler::exact;
  return d;
}

void check_samples_buildable(const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                             const AlgorithmOptions& options, const ArrivalSampling& sampling,
                             const RunSettings& settings) {
  if (sampling.samples == 0) return;
  const std::optional<AllPairs> described = algorithm.pairs(ranks, bytes, options);
  if (!described) return;
  const AllPairs& pairs = *described;
  if (pairs.op_count() > ScheduleBuilder::max_ops) {
    throw UsageError("--samples: each sampled run simulates every message of the written schedule, and " +
                     std::string(algorithm.name) + " on " + std::to_string(ranks) + " ranks would hold " +
                     std::to_string(pairs.op_count()) + " ops (at most " + std::to_string(ScheduleBuilder::max_ops) +
                     "): sample fewer ranks, or run without --samples");
  }
  // Ranks arriving apart form no classes, and every message's end recomputes the rates of the P - 1 sharing its
  // rank's links: about 80 ns a message and rank (measured: an all-to-all of 1024 ranks, 82 s a sample); the
  // analytical backend shares no link
  if (settings.force || settings.backend == "analytical") return;
  const double each_s = 80e-9 * static_cast<double>(pairs.messages()) * ranks;
  const double all_s = each_s * sampling.samples;
  if (all_s > simgrid_time_limit_s) {
    throw UsageError("--samples: " + std::to_string(sampling.samples) +
                     (sampling.samples == 1 ? " sample of " : " samples of ") + std::string(algorithm.name) + " on " +
                     std::to_string(ranks) + " ranks would take about " + format_seconds(all_s) + " (" +
                     format_seconds(each_s) + " each: ranks arriving apart run every message), above the " +
                     format_seconds(simgrid_time_limit_s) +
                     " limit: ask for fewer samples or ranks, or --force to run them anyway");
  }
}

void add_arrival_samples(CollectiveRun& run, const AlgorithmInfo& algorithm, int ranks, std::uint64_t bytes,
                         const AlgorithmOptions& options, const RunSettings& settings, const ClusterInstance* cluster,
                         const ArrivalSampling& sampling) {
  if (sampling.samples == 0) return;
  if (run.channels > 1 || run.protocol != Protocol::none) {
    throw UsageError("--samples: not with a collective library's channels and protocols yet (add --protocol none)");
  }
  run.distribution =
      sample_arrivals(build_schedule(algorithm, ranks, bytes, options, cluster), settings, cluster, sampling);
}

}  // namespace dtsim::cli
