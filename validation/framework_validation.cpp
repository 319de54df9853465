#include "validation/framework_validation.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "reports/framework_report.hpp"
#include "reports/output_file.hpp"
#include "scenarios/profile_file.hpp"
#include "scenarios/units.hpp"
#include "sim/predict.hpp"
#include "sim/scenario_step.hpp"
#include "validation/json_fields.hpp"
#include "validation/validate.hpp"

namespace dtsim {
namespace {

// The emulated cluster as dtsim sees it: one rank a node, each behind one link into a switch, of the fitted bandwidth
// or the transport's own rate alone where that is lower (transport_bandwidth_Bps); the two links of a route carry half
// the ping-pong's one-way latency each.
ClusterSpec emulated_cluster(const FrameworkNetwork& net) {
  ClusterSpec c;
  c.name = "emulated (" + std::to_string(net.ranks) + " network namespaces)";
  c.source = "the ping-pong and message-rate fits of the emulated run";
  c.nodes = net.ranks;
  c.node.accelerator = "cpu";
  c.node.accelerators = 1;
  c.node.intra_kind = IntraKind::pcie;
  c.node.pcie = {1e12, 0, 0};
  c.node.cpu_link = {1e12, 0, 0};
  c.node.nics = 1;
  c.node.nic = {std::min(net.cost.bandwidth_Bps, transport_bandwidth_Bps(net)), net.cost.alpha_s / 2, net.cost.gap_s};
  c.node.reduce_Bps = net.reduce_Bps;
  c.node.compute_rate_while_transporting = net.compute_rate_while_transporting;
  c.node.transport_rate_while_computing = net.transport_rate_while_computing;
  c.fabric.kind = FabricKind::star;
  return c;
}

std::string profile_copy_name(const FrameworkNetwork& net, const std::string& model, int batch) {
  return "profile-" + model + "-" + std::to_string(batch) + "-r" + std::to_string(net.ranks) + "-" +
         std::to_string(static_cast<long>(net.rate_bps / 1e6)) + "mbit.csv";
}

std::string cases_text(const FrameworkPlan& plan) {
  std::string lines;
  for (const FrameworkModelCases& m : plan.models) {
    for (const int batch : m.batches) {
      for (const double bucket : plan.buckets_mb) {
        char line[128];
        std::snprintf(line, sizeof line, "%s %d %g\n", m.model.c_str(), batch, bucket);
        lines += line;
      }
    }
  }
  return lines;
}

}  // namespace

double transport_bandwidth_Bps(const FrameworkNetwork& net) {
  if (!(net.transport_alone_Bps > 0)) return std::numeric_limits<double>::infinity();
  const double reduce_s_per_byte = net.reduce_Bps > 0 ? 0.25 / net.reduce_Bps : 0.0;
  const double transfer_s_per_byte = 1.0 / net.transport_alone_Bps - reduce_s_per_byte;
  if (!(transfer_s_per_byte > 0)) return std::numeric_limits<double>::infinity();
  return 1.0 / (2.0 * transfer_s_per_byte);
}

void predict_framework_case(FrameworkCase& c, const FrameworkNetwork& net, const std::string& base_dir) {
  MeasuredProfile profile = load_profile_file(base_dir + "/" + c.profile);
  // the profiler's own cost out, and the contention of N ranks computing at once in: the profile's parts (one rank
  // alone) scaled to the step measured without the profiler with every rank computing (same share)
  const double scale = c.compute_s / profile.step_s();
  for (MeasuredLayer& layer : profile.layers) {
    layer.forward_s *= scale;
    layer.backward_s *= scale;
  }
  profile.optimizer_s *= scale;
  profile.overhead_s *= scale;
  TrainingSetup setup;
  setup.model = model_of(profile);
  setup.device.name = "cpu (emulated rank)";
  setup.device.kind = DeviceKind::cpu;
  setup.device.memory_bytes = 1e12;  // (the measured run fitted)
  setup.compute.precision = Precision::fp32;
  setup.scaling = ScalingMode::weak;
  setup.batch = profile.batch;
  apply_preset(setup, FrameworkPreset::ddp);
  setup.bucket_bytes = c.bucket_mb * 1048576.0;
  setup.profile = profile;
  StepRequest request;
  request.accelerators = c.ranks;
  request.algorithm = "ring";  // gloo's allreduce (gloo/allreduce.cc: the ring unless bcube is asked for)
  request.backend = Backend::simgrid;
  if (c.ranks > 1 && c.compute_samples_s.size() > 1) {
    // each rank's compute of each step from the ranks' no_sync steps: the profile (scaled to compute_s) times a
    // measured time over compute_s; the exact sampler, whose steps run the transport's processor model too
    setup.variability.jitter.scope = JitterScope::step;
    const std::size_t per_rank = c.compute_samples_s.size() / static_cast<std::size_t>(c.ranks);
    if (per_rank * static_cast<std::size_t>(c.ranks) != c.compute_samples_s.size()) {
      throw std::invalid_argument("compute_samples_s: " + std::to_string(c.compute_samples_s.size()) + " times for " +
                                  std::to_string(c.ranks) + " ranks; expected as many for every rank");
    }
    // replayed side by side (rank r's times are the r-th run of per_rank in the list): the ranks' times of one
    // moment make one step, and the prediction is the median over the moments, as the measured step is (since
    // session 42; drawn independently from all of them before, which made nearly every step wait for a moment
    // when the whole machine was slow)
    setup.variability.jitter.distribution = JitterDistribution::replay;
    for (int r = 0; r < c.ranks; ++r) {
      std::vector<double> row;
      for (std::size_t k = 0; k < per_rank; ++k)
        row.push_back(c.compute_samples_s[static_cast<std::size_t>(r) * per_rank + k] / c.compute_s);
      setup.variability.jitter.rank_factors.push_back(std::move(row));
    }
    request.sampling.samples = static_cast<int>(per_rank);
    request.sampling.seed = 1;
    request.sampling.sampler = Sampler::exact;
  }
  const StepResult result = simulate_step(setup, emulated_cluster(net), request);
  const Prediction& p = *result.plain();
  c.predicted_s = p.distribution.samples > 0 ? p.distribution.median_s : p.step.step_s;
  // (the step's own exposed communication where the transport slows no compute: the profile adds up to compute_s)
  c.predicted_exposed_s = std::max(0.0, c.predicted_s - c.compute_s);
  c.buckets = static_cast<int>(gradient_buckets(setup).size());
}

void summarize_framework(FrameworkResult& result) {
  std::vector<double> errors, points;
  for (const FrameworkCase& c : result.cases) {
    errors.push_back(std::fabs(c.error()));
    points.push_back(std::fabs(c.predicted_exposed_fraction() - c.measured_exposed_fraction()));
  }
  result.median_abs_error = percentile(errors, 0.5);
  result.p90_abs_error = percentile(errors, 0.9);
  result.exposed_median_points = percentile(points, 0.5);
  result.exposed_max_points = points.empty() ? 0.0 : *std::max_element(points.begin(), points.end());
}

FrameworkResult run_framework_validation(const FrameworkPlan& plan,
                                         const std::function<void(const std::string&)>& progress) {
  FrameworkResult result;
  std::filesystem::create_directories(plan.out_dir + "/pytorch-profiles");
  for (const double rate : plan.rates_Mbps) {
    for (const int ranks : plan.ranks) {
      progress(std::to_string(ranks) + " ranks at " + std::to_string(static_cast<long>(rate)) +
               " Mbit/s: measuring (PyTorch DDP over gloo)");
      const std::string out =
          (std::filesystem::temp_directory_path() / ("dtsim-validate-torch-" + std::to_string(::getpid()) + ".txt"))
              .string();
      const double share = FrameworkPlan::cpu_share(ranks);
      std::ostringstream command;
      command << "DTSIM_TORCH_SHARE=" << share << " DTSIM_TORCH_CASES='" << cases_text(plan) << "' bash " << plan.script
              << ' ' << plan.bin_dir << ' ' << ranks << ' ' << static_cast<long>(rate) << " 1 " << out << " '' > "
              << out << ".log 2>&1";
      const int status = std::system(command.str().c_str());
      std::string log;
      {
        std::ifstream l(out + ".log");
        std::getline(l, log, '\0');
      }
      if (status != 0) {
        std::filesystem::remove(out);
        std::filesystem::remove_all(out + ".d");
        std::filesystem::remove(out + ".log");
        throw std::runtime_error("emulated PyTorch run (" + std::to_string(ranks) + " ranks, " +
                                 std::to_string(static_cast<long>(rate)) +
                                 " Mbit/s) failed: " + log.substr(log.size() > 800 ? log.size() - 800 : 0));
      }
      FrameworkNetwork net;
      net.ranks = ranks;
      net.rate_bps = rate * 1e6;
      {
        std::ifstream in(out);
        net.cost = fit_emulated_network(in);
      }
      std::map<std::string, double> compute, compute_all;  // "model batch" -> seconds: one rank alone, all at once
      std::map<std::string, std::string> profiles;
      std::vector<FrameworkCase> cases;
      double transport_cpu_s = 0, transport_wall_s = 0, transport_moved = 0, transport_reduced = 0;
      double transport_computing_s = 0;
      std::ifstream in(out);
      std::string line;
      while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string kind, model, share_text;
        fields >> kind;
        int batch = 0;
        if (kind == "torch_share") {
          fields >> share_text;
          net.cpu_share = share_text == "none" ? 0.0 : std::stod(share_text);
        } else if (kind == "torch_reduce") {
          fields >> net.reduce_Bps;
        } else if (kind == "torch_transport") {
          fields >> transport_cpu_s >> transport_wall_s >> transport_moved >> transport_reduced >>
              transport_computing_s >> net.compute_rate_while_transporting;
        } else if (kind == "torch_compute") {
          double seconds = 0;
          fields >> model >> batch >> seconds;
          compute[model + " " + std::to_string(batch)] = seconds;
        } else if (kind == "torch_compute_all") {
          double seconds = 0;
          fields >> model >> batch >> seconds;
          compute_all[model + " " + std::to_string(batch)] = seconds;
        } else if (kind == "torch_profile") {
          std::string path;
          fields >> model >> batch >> path;
          const std::string kept = "pytorch-profiles/" + profile_copy_name(net, model, batch);
          const MeasuredProfile profile = load_profile_file(path);  // kept as the CSV of its layers' times
          write_file_atomically(plan.out_dir + "/" + kept, [&](std::ostream& f) { write_profile_csv(profile, f); });
          profiles[model + " " + std::to_string(batch)] = kept;
        } else if (kind == "torch_step") {
          FrameworkCase c;
          c.ranks = ranks;
          c.rate_bps = net.rate_bps;
          fields >> c.model >> c.batch >> c.bucket_mb >> c.measured_s;
          if (!(fields >> c.compute_same_run_s)) c.compute_same_run_s = 0;  // (one rank: none)
          for (double t = 0; fields >> t;)
            c.compute_samples_s.push_back(t);
          cases.push_back(c);
        }
      }
      std::filesystem::remove(out);
      std::filesystem::remove_all(out + ".d");
      std::filesystem::remove(out + ".log");
      if (net.reduce_Bps <= 0 || cases.empty() ||
          (ranks > 1 && !(transport_moved > 0 && transport_cpu_s > 0 && transport_wall_s > 0 &&
                          transport_computing_s > 0 && net.compute_rate_while_transporting > 0))) {
        throw std::runtime_error("emulated PyTorch run (" + std::to_string(ranks) +
                                 " ranks): no torch_reduce, torch_transport or torch_step lines in its output");
      }
      if (ranks > 1) {  // processor time at the share per byte, less the reductions' (at the measured reduce rate)
        const double cores = net.cpu_share > 0 ? net.cpu_share : 1.0;
        net.transport_s_per_byte =
            std::max(0.0, (transport_cpu_s / cores - transport_reduced / net.reduce_Bps) / transport_moved);
        net.compute_rate_while_transporting = std::min(1.0, net.compute_rate_while_transporting);
        net.transport_rate_while_computing = std::min(1.0, transport_wall_s / transport_computing_s);
        net.transport_alone_Bps = transport_moved / transport_wall_s;
      }
      result.networks.push_back(net);
      progress(std::to_string(ranks) + " ranks: predicting");
      for (FrameworkCase& c : cases) {
        const std::string key = c.model + " " + std::to_string(c.batch);
        c.compute_alone_s = compute.at(key);
        c.compute_all_s = compute_all.at(key);
        c.compute_s = c.compute_same_run_s > 0 ? c.compute_same_run_s : c.compute_all_s;
        c.profile = profiles.at(key);
        predict_framework_case(c, net, plan.out_dir);
        result.cases.push_back(c);
      }
    }
  }
  summarize_framework(result);
  return result;
}

nlohmann::json framework_json(const FrameworkResult& result, const std::string& command) {
  nlohmann::json networks = nlohmann::json::array();
  for (const FrameworkNetwork& n : result.networks) {
    networks.push_back({{"ranks", n.ranks},
                        {"rate_bps", n.rate_bps},
                        {"alpha_s", n.cost.alpha_s},
                        {"bandwidth_Bps", n.cost.bandwidth_Bps},
                        {"gap_s", n.cost.gap_s},
                        {"reduce_Bps", n.reduce_Bps},
                        {"cpu_share", n.cpu_share},
                        {"compute_rate_while_transporting", n.compute_rate_while_transporting},
                        {"transport_rate_while_computing", n.transport_rate_while_computing},
                        {"transport_s_per_byte", n.transport_s_per_byte},
                        {"transport_alone_Bps", n.transport_alone_Bps}});
  }
  nlohmann::json cases = nlohmann::json::array();
  for (const FrameworkCase& c : result.cases) {
    cases.push_back({{"ranks", c.ranks},
                     {"rate_bps", c.rate_bps},
                     {"model", c.model},
                     {"batch", c.batch},
                     {"bucket_mb", c.bucket_mb},
                     {"profile", c.profile},
                     {"compute_s", c.compute_s},
                     {"compute_alone_s", c.compute_alone_s},
                     {"compute_all_s", c.compute_all_s},
                     {"compute_same_run_s", c.compute_same_run_s},
                     {"compute_samples_s", c.compute_samples_s},
                     {"measured_s", c.measured_s},
                     {"predicted_s", c.predicted_s},
                     {"error", c.error()},
                     {"measured_exposed_fraction", c.measured_exposed_fraction()},
                     {"predicted_exposed_fraction", c.predicted_exposed_fraction()},
                     {"buckets", c.buckets}});
  }
  return {{"kind", "pytorch-validation"},
          {"command", command},
          {"median_abs_error", result.median_abs_error},
          {"p90_abs_error", result.p90_abs_error},
          {"exposed_median_points", result.exposed_median_points},
          {"exposed_max_points", result.exposed_max_points},
          {"networks", networks},
          {"cases", cases}};
}

FrameworkResult repredict_framework(const nlohmann::json& previous, const std::string& base_dir) {
  if (!previous.is_object() || previous.value("kind", std::string()) != "pytorch-validation") {
    throw std::invalid_argument("not a pytorch-validation.json (its \"kind\" is not pytorch-validation)");
  }
  check_keys(previous, "",
             {"kind", "command", "median_abs_error", "p90_abs_error", "exposed_median_points", "exposed_max_points",
              "networks", "cases"});
  for (const char* list : {"networks", "cases"}) {
    if (!previous.contains(list) || !previous.at(list).is_array() || previous.at(list).empty()) {
      throw std::invalid_argument(std::string(list) + ": expected a non-empty list");
    }
  }
  FrameworkResult result;
  const nlohmann::json& networks = previous.at("networks");
  for (std::size_t i = 0; i < networks.size(); ++i) {
    const nlohmann::json& n = networks[i];
    const std::string at = "networks[" + std::to_string(i) + "].";
    check_keys(n, at,
               {"ranks", "rate_bps", "alpha_s", "bandwidth_Bps", "gap_s", "reduce_Bps", "cpu_share",
                "compute_rate_while_transporting", "transport_rate_while_computing", "transport_s_per_byte",
                "transport_alone_Bps"});
    FrameworkNetwork net;
    net.ranks = field_count(n, at, "ranks");
    net.rate_bps = field_number(n, at, "rate_bps", 0, 8 * max_bandwidth_Bps);
    net.cost.alpha_s = field_number(n, at, "alpha_s", 0, max_duration_s);
    net.cost.bandwidth_Bps = field_number(n, at, "bandwidth_Bps", min_bandwidth_Bps, max_bandwidth_Bps);
    net.cost.gap_s = field_number(n, at, "gap_s", 0, max_duration_s);
    net.reduce_Bps = field_number(n, at, "reduce_Bps", min_bandwidth_Bps, max_bandwidth_Bps);
    net.cpu_share = field_number(n, at, "cpu_share", 0, 1);  // (0: no share set)
    // (runs before session 27: not measured, the model without it)
    net.compute_rate_while_transporting = optional_number(n, at, "compute_rate_while_transporting", 1e-3, 2, 1.0);
    net.transport_rate_while_computing = optional_number(n, at, "transport_rate_while_computing", 1e-3, 2, 1.0);
    net.transport_s_per_byte = optional_number(n, at, "transport_s_per_byte", 0, 1, 0.0);
    // (runs before session 28: not kept)
    net.transport_alone_Bps = optional_number(n, at, "transport_alone_Bps", 0, max_bandwidth_Bps, 0.0);
    result.networks.push_back(net);
  }
  const nlohmann::json& cases = previous.at("cases");
  std::vector<const FrameworkNetwork*> case_network;  // by case: the network it ran on
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const nlohmann::json& j = cases[i];
    const std::string at = "cases[" + std::to_string(i) + "].";
    check_keys(j, at,
               {"ranks", "rate_bps", "model", "batch", "bucket_mb", "profile", "compute_s", "compute_alone_s",
                "compute_all_s", "compute_same_run_s", "compute_samples_s", "measured_s", "predicted_s", "error",
                "measured_exposed_fraction", "predicted_exposed_fraction", "buckets"});
    FrameworkCase c;
    c.ranks = field_count(j, at, "ranks");
    c.rate_bps = field_number(j, at, "rate_bps", 0, 8 * max_bandwidth_Bps);
    c.model = field_text(j, at, "model");
    c.batch = field_count(j, at, "batch");
    c.bucket_mb = field_number(j, at, "bucket_mb", 1e-6, 1e6);
    c.profile = field_text(j, at, "profile");
    c.compute_s = field_number(j, at, "compute_s", 1e-9, max_duration_s);
    // (runs before session 26: the same as compute_s; before session 28 likewise)
    c.compute_alone_s = optional_number(j, at, "compute_alone_s", 1e-9, max_duration_s, c.compute_s);
    c.compute_all_s = optional_number(j, at, "compute_all_s", 1e-9, max_duration_s, c.compute_s);
    c.compute_same_run_s = optional_number(j, at, "compute_same_run_s", 0, max_duration_s, 0.0);
    if (j.contains("compute_samples_s")) {  // (before session 29: none)
      const nlohmann::json& samples = j.at("compute_samples_s");
      for (std::size_t k = 0; samples.is_array() && k < samples.size(); ++k) {
        if (!samples[k].is_number() || !(samples[k].get<double>() > 0) ||
            !(samples[k].get<double>() <= max_duration_s)) {
          throw std::invalid_argument(at + "compute_samples_s[" + std::to_string(k) + "]: expected a time > 0 s, got " +
                                      samples[k].dump());
        }
        c.compute_samples_s.push_back(samples[k].get<double>());
      }
      if (!samples.is_array()) throw std::invalid_argument(at + "compute_samples_s: expected a list of times in s");
      if (c.compute_samples_s.size() % static_cast<std::size_t>(c.ranks) != 0) {
        throw std::invalid_argument(at + "compute_samples_s: " + std::to_string(c.compute_samples_s.size()) +
                                    " times for " + std::to_string(c.ranks) +
                                    " ranks; expected as many for every rank, each rank's in turn");
      }
    }
    c.measured_s = field_number(j, at, "measured_s", 1e-9, max_duration_s);
    const auto net = std::find_if(result.networks.begin(), result.networks.end(), [&](const FrameworkNetwork& n) {
      return n.ranks == c.ranks && n.rate_bps == c.rate_bps;
    });
    if (net == result.networks.end()) {
      throw std::invalid_argument(at + "ranks, rate_bps: no entry of networks has " + std::to_string(c.ranks) +
                                  " ranks at that rate (each case runs on one of them)");
    }
    result.cases.push_back(c);
    case_network.push_back(&*net);
  }
  for (std::size_t i = 0; i < result.cases.size(); ++i)  // (once the whole file is read: a bad field named first)
    predict_framework_case(result.cases[i], *case_network[i], base_dir);
  summarize_framework(result);
  return result;
}

std::string framework_markdown(const FrameworkResult& result, const std::string& command) {
  std::ostringstream out;
  char line[512];
  out << "# PyTorch DDP on the emulated cluster against dtsim\n\n`" << command << "`\n\n";
  out << framework_summary(result.median_abs_error, result.p90_abs_error, result.cases.size(),
                           result.exposed_median_points, result.exposed_max_points)
      << "\n\n";
  out << "| ranks | rate | alpha | bandwidth | gap | reduce | transport CPU | transport alone | compute kept "
         "| transport kept | CPU share a rank |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const FrameworkNetwork& n : result.networks) {
    const double transport_Bps = transport_bandwidth_Bps(n);
    const std::string transport_alone =
        std::isfinite(transport_Bps) ? std::to_string(transport_Bps / 1e6).substr(0, 6) + " MB/s" : "-";
    std::snprintf(
        line, sizeof line,
        "| %d | %.0f Mbit/s | %.1f us | %.2f MB/s | %.2f us | %.2f GB/s | %.2f ns/B | %s | %.2f | %.2f | %s |\n",
        n.ranks, n.rate_bps / 1e6, n.cost.alpha_s * 1e6, n.cost.bandwidth_Bps / 1e6, n.cost.gap_s * 1e6,
        n.reduce_Bps / 1e9, n.transport_s_per_byte * 1e9, transport_alone.c_str(), n.compute_rate_while_transporting,
        n.transport_rate_while_computing, n.cpu_share > 0 ? std::to_string(n.cpu_share).substr(0, 4).c_str() : "none");
    out << line;
  }
  out << "\n| ranks | rate | model | batch | bucket | buckets | compute alone | compute, all ranks | compute, same run "
         "| measured | predicted | error | exposed measured | exposed predicted "
         "|\n|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const FrameworkCase& c : result.cases) {
    char same[32];
    std::snprintf(same, sizeof same, "%.1f ms", c.compute_same_run_s * 1e3);
    const std::string same_run = c.compute_same_run_s > 0 ? same : "-";
    std::snprintf(
        line, sizeof line,
        "| %d | %.0f Mbit/s | %s | %d | %g MiB | %d | %.1f ms | %.1f ms | %s | %.1f ms | %.1f ms | %+.1f%% | %.0f%% | "
        "%.0f%% |\n",
        c.ranks, c.rate_bps / 1e6, c.model.c_str(), c.batch, c.bucket_mb, c.buckets, c.compute_alone_s * 1e3,
        c.compute_all_s * 1e3, same_run.c_str(), c.measured_s * 1e3, c.predicted_s * 1e3, 100 * c.error(),
        100 * c.measured_exposed_fraction(), 100 * c.predicted_exposed_fraction());
    out << line;
  }
  return out.str();
}

}  // namespace dtsim
