#include "calibrate/calibration_run.hpp"

#include <unistd.h>

#include <Eigen/Core>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <thread>

#include "calibrate/fit.hpp"
#include "calibrate/microbench.hpp"
#include "calibrate/network.hpp"

namespace dtsim {
namespace {

std::string first_line_of(const std::string& command) {
  const std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe) return "unknown";
  char line[256] = {};
  if (std::fgets(line, sizeof line, pipe.get()) == nullptr) return "unknown";
  std::string s(line);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.pop_back();
  return s;
}

nlohmann::json machine() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  std::string cpu = "unknown";
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; std::getline(info, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return {{"hostname", host},
          {"cpu", cpu},
          {"cores", std::thread::hardware_concurrency()},
          {"memory_bytes", static_cast<double>(pages) * static_cast<double>(page)}};
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

nlohmann::json samples_json(const std::vector<Sample>& samples) {
  nlohmann::json out = nlohmann::json::array();
  for (const Sample& s : samples)
    out.push_back({s.x, s.y});
  return out;
}

}  // namespace

nlohmann::json run_calibration(const CalibrateOptions& o) {
  auto progress = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  const double t = o.quick ? 0.25 : 1.0;  // seconds per measurement
  // samples measured elsewhere are read and fitted first: a bad file is refused before seconds of measuring
  std::vector<Sample> network;
  std::vector<LinearFit> network_fits;
  if (!o.network_csv.empty()) {
    network = read_samples_csv(o.network_csv);
    network_fits = fit_piecewise(network, network_breakpoints, "network");
  }
  nlohmann::json doc;
  nlohmann::json& c = doc["calibration"];
  c["machine"] = machine();
  c["date"] = utc_now();
  c["quick"] = o.quick;
  c["versions"] = {{"dtsim", DTSIM_VERSION},
                   {"eigen", std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                                 std::to_string(EIGEN_MINOR_VERSION)},
                   {"simgrid", DTSIM_SIMGRID_VERSION},
                   {"mpi", o.measure_network && o.network_csv.empty() ? first_line_of("mpirun --version 2>&1")
                                                                      : std::string("not used")}};

  // compute: GEMMs of the kernel's layer shapes (forward, weight gradient, input gradient) and a large square one
  nlohmann::json gemms = nlohmann::json::array();
  double best = 0;
  const int shapes[][3] = {{95, 128, 784}, {95, 784, 128},  {784, 128, 95},    {95, 512, 784},
                           {10, 128, 95},  {512, 512, 512}, {1024, 1024, 1024}};
  for (const auto& s : shapes) {
    progress("compute: GEMM " + std::to_string(s[0]) + "x" + std::to_string(s[1]) + "x" + std::to_string(s[2]));
    const GemmMeasurement g = measure_gemm(s[0], s[1], s[2], t);
    gemms.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"flops_per_s", g.flops_per_s}});
    best = std::max(best, g.flops_per_s);
  }
  c["compute"]["gemm"] = gemms;
  c["compute"]["gemm_flops_per_s"] = best;
  progress("compute: SGD kernel step time against batch size");
  const std::vector<Sample> steps = measure_kernel_steps({8, 16, 32, 64, 128, 256, 512}, t);
  const LinearFit kernel = fit_line(steps, "SGD kernel step time");
  c["compute"]["kernel"] = {{"model", "784-95-10 MLP, one training step"},
                            {"samples", samples_json(steps)},
                            {"overhead_s", kernel.intercept},
                            {"per_sample_s", kernel.slope},
                            {"r_squared", kernel.r_squared},
                            {"residuals", kernel.residuals}};
  progress("compute: SGD kernel step-time distribution");
  constexpr int distribution_batch = 128;
  c["compute"]["step_times"] = {{"batch", distribution_batch},
                                {"seconds", measure_step_times(distribution_batch, o.quick ? 100 : 500)}};
  progress("memory: triad");
  c["memory"]["triad_Bps"] = measure_triad_Bps(std::size_t{1} << 24, t);
  progress("reduction: summing float arrays");
  c["reduction"]["Bps"] = measure_reduce_Bps(std::size_t{1} << 24, t);

  std::string source;
  if (!o.network_csv.empty()) {
    source = "csv " + o.network_csv;
  } else if (o.measure_network) {
    progress("network: MPI ping-pong, 2 processes, 1 B to 64 MB");
    network = run_mpi_pingpong(o.pingpong_binary, pingpong_sizes(64L << 20), o.quick ? 5 : 30, 300);
    if (!network.empty()) network_fits = fit_piecewise(network, network_breakpoints, "network");
    source = "MPI ping-pong between 2 processes on this machine (mpirun -np 2), best of the repetitions";
  }
  if (!network.empty()) {
    const std::vector<LinearFit>& fits = network_fits;
    nlohmann::json ranges = nlohmann::json::array();
    for (std::size_t r = 0; r < fits.size(); ++r) {
      ranges.push_back({{"min_bytes", network_breakpoints[r]},
                        {"alpha_s", fits[r].intercept},
                        // a flat range (time independent of size) has no bandwidth limit to speak of
                        {"bandwidth_Bps", fits[r].slope > 1e-15 ? 1.0 / fits[r].slope : 1e15},
                        {"r_squared", fits[r].r_squared},
                        {"residuals", fits[r].residuals}});
    }
    c["network"] = {{"source", source}, {"samples", samples_json(network)}, {"ranges", ranges}};
    if (o.network_csv.empty() && o.measure_network) {
      progress("network: message rate, 8, 16 and 64 small messages at once");
      const std::vector<Sample> rate =
          run_mpi_pingpong(o.pingpong_binary, {8, 16, 64}, o.quick ? 5 : 30, 300, "msgrate");
      c["network"]["message_rate"] = {{"samples", samples_json(rate)}, {"message_gap_s", fit_message_gap(rate)}};
    }
  }
  return doc;
}

}  // namespace dtsim
