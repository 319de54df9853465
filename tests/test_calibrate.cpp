// Fits of measured samples, the calibration file, and calibrated networks on both executors.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "algorithms/registry.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/network.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/json_reader.hpp"
#include "sim/analytical_executor.hpp"
#include "sim/simgrid_executor.hpp"

using namespace dtsim;

namespace {

// Deterministic noise in [-amplitude, +amplitude] (relative).
double noisy(double value, int i, double amplitude) {
  const double u = std::fmod(std::sin(i * 12.9898) * 43758.5453, 1.0);  // in (-1, 1)
  return value * (1 + amplitude * u);
}

}  // namespace

TEST_CASE("fits recover known latency and bandwidth from noisy samples, piecewise by message size") {
  std::vector<Sample> samples;
  int i = 0;
  for (double bytes : std::vector<double>{1, 16, 256, 1024, 4096}) {  // small: 2 us, 1 GB/s
    samples.push_back(Sample{bytes, noisy(2e-6 + bytes / 1e9, ++i, 0.02)});
  }
  for (long bytes : pingpong_sizes(64L << 20)) {
    if (bytes < 8192) continue;
    const double b = static_cast<double>(bytes);
    const double seconds = b < 262144 ? 5e-6 + b / 4e9 : 20e-6 + b / 10e9;  // medium 5 us, 4 GB/s; large 20 us, 10 GB/s
    samples.push_back(Sample{b, noisy(seconds, ++i, 0.02)});
  }
  const std::vector<LinearFit> fits = fit_piecewise(samples, network_breakpoints, "synthetic");
  REQUIRE(fits.size() == 3);
  CHECK(fits[0].intercept == Approx(2e-6).epsilon(0.05));
  CHECK(1 / fits[0].slope == Approx(1e9).epsilon(0.05));
  CHECK(1 / fits[1].slope == Approx(4e9).epsilon(0.05));
  CHECK(1 / fits[2].slope == Approx(10e9).epsilon(0.03));
  for (const LinearFit& f : fits) {
    CHECK(f.r_squared > 0.99);
    CHECK(f.residuals.size() >= 3);
  }
  // the kernel's step time: overhead + per-sample cost
  std::vector<Sample> steps;
  for (int batch : {8, 16, 32, 64, 128})
    steps.push_back(Sample{double(batch), noisy(3e-6 + 10e-6 * batch, batch, 0.01)});
  const LinearFit kernel = fit_line(steps, "kernel");
  CHECK(kernel.slope == Approx(10e-6).epsilon(0.02));
  CHECK(kernel.intercept == Approx(3e-6).margin(3e-6));
}

TEST_CASE("fits that cannot be trusted are refused with a clear message") {
  const std::vector<Sample> two{{1, 1e-6}, {2, 2e-6}};
  CHECK_THROWS_WITH(fit_line(two, "network"), "network: needs at least 3 samples at 2 or more sizes, got 2 at 2");
  const std::vector<Sample> falling{{1000, 3e-6}, {2000, 2e-6}, {4000, 1e-6}};
  CHECK_THROWS_WITH(fit_line(falling, "network"), Catch::StartsWith("network: negative slope"));
  const std::vector<Sample> one_size{{64, 1e-6}, {64, 1.1e-6}, {64, 0.9e-6}};
  CHECK_THROWS_AS(fit_line(one_size, "network"), FitError);
  const std::vector<Sample> sparse{{1, 1e-6}, {2, 1e-6}, {3, 1e-6}, {1e6, 1e-3}};  // flat small range: accepted
  CHECK_THROWS_WITH(fit_piecewise(sparse, network_breakpoints, "network"),
                    Catch::StartsWith("network [8192, 262144) bytes: needs at least 3 samples"));
}

TEST_CASE("measured samples from CSV: header skipped, a bad line named with its number") {
  const auto dir = std::filesystem::temp_directory_path() / ("dtsim-csv-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "good.csv") << "bytes,seconds\n8,1e-6\n\n1024,2e-6\n";
  CHECK(read_samples_csv((dir / "good.csv").string()).size() == 2);
  std::ofstream(dir / "bad.csv") << "8,1e-6\n1024;2e-6\n";
  CHECK_THROWS_WITH(read_samples_csv((dir / "bad.csv").string()),
                    Catch::EndsWith("bad.csv:2: expected \"bytes,seconds\" with bytes >= 0 and seconds > 0, got "
                                    "\"1024;2e-6\""));
  // a first line that is neither a sample nor a header of two names is malformed, not skipped
  for (const char* first : {"xyz", "1;2e-6", "bytes,seconds,extra"}) {
    std::ofstream(dir / "first.csv") << first << "\n8,1e-6\n1024,2e-6\n";
    CHECK_THROWS_WITH(read_samples_csv((dir / "first.csv").string()),
                      Catch::Contains("first.csv:1: expected \"bytes,seconds\""));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a calibrated piecewise network: SimGrid's factor callbacks and the analytical executor agree") {
  const std::vector<NetworkRange> ranges{{0, 1e-6, 1e9}, {8192, 3e-6, 4e9}, {262144, 10e-6, 10e9}};
  const NetworkRange reference = reference_network(ranges);
  CHECK(reference.alpha_s == 10e-6);
  CHECK(reference.bandwidth_Bps == 10e9);
  const std::vector<FactorRange> factors = network_factors(ranges);
  CHECK(factors_for(factors, 100).bandwidth_factor == Approx(0.1));
  CHECK(factors_for(factors, 1e6).latency_factor == Approx(1.0));
  for (std::uint64_t bytes : {800ULL, 80000ULL, 80000000ULL}) {
    CAPTURE(bytes);
    const Schedule s = find_algorithm("ring").build(8, bytes, AlgorithmOptions{});
    AnalyticalOptions an;
    an.cost.alpha_s = reference.alpha_s;
    an.cost.bandwidth_Bps = reference.bandwidth_Bps;
    an.factors = factors;
    SimGridOptions sg;
    sg.cost = an.cost;
    sg.factors = factors;
    const double analytical = run_analytical(s, an).time_s;
    CHECK(run_simgrid(s, sg).time_s == Approx(analytical).epsilon(1e-6));
    // each ring step moves bytes/8 at the range's own latency and bandwidth
    const NetworkRange& r = bytes / 8 < 8192 ? ranges[0] : bytes / 8 < 262144 ? ranges[1] : ranges[2];
    const double chunk = static_cast<double>(bytes) / 8;
    CHECK(analytical == Approx(14 * (r.alpha_s + chunk / r.bandwidth_Bps) + 7 * chunk / an.cost.reduce_Bps));
  }
}

TEST_CASE("calibration files: a missing or wrong field names its JSON path") {
  const nlohmann::json good = nlohmann::json::parse(R"({"calibration": {
    "machine": {"cpu": "x"}, "date": "2026-11-22T00:00:00Z", "versions": {},
    "compute": {"gemm": [], "gemm_flops_per_s": 3e10,
                "kernel": {"model": "m", "samples": [], "overhead_s": 3e-6, "per_sample_s": 1e-5, "r_squared": 0.99,
                           "residuals": []}},
    "memory": {"triad_Bps": 2e10}, "reduction": {"Bps": 1e10},
    "network": {"source": "s", "samples": [], "ranges": [
      {"min_bytes": 0, "alpha_s": 1e-6, "bandwidth_Bps": 1e9, "r_squared": 0.9, "residuals": []},
      {"min_bytes": 8192, "alpha_s": 2e-6, "bandwidth_Bps": 5e9, "r_squared": 0.9, "residuals": []}]}}})");
  const Calibration c = parse_calibration(good);
  CHECK(c.network.size() == 2);
  CHECK(c.kernel_per_sample_s == 1e-5);
  auto error = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json bad = good;
    change(bad);
    try {
      parse_calibration(bad);
    } catch (const ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error([](nlohmann::json& j) { j["calibration"]["memory"].erase("triad_Bps"); }) ==
        "calibration.memory.triad_Bps: missing; expected a number in [0.125, 1e+18]");
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["reduction"]["Bps"] = "fast"; }),
             Catch::StartsWith("calibration.reduction.Bps: expected a number"));
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["network"]["ranges"][1]["min_bytes"] = 0; }),
             Catch::StartsWith("calibration.network.ranges[1].min_bytes: expected ranges by ascending min_bytes"));
  CHECK_THAT(
      error([](nlohmann::json& j) { j["calibration"]["compute"]["kernel"]["per_sample_s"] = -1; }),
      Catch::StartsWith("calibration.compute.kernel.per_sample_s: expected a number in [1e-300, 1000000000], got -1"));
  // a rate of 1e-300 would leave every executor waiting for ever (SimGrid reported a deadlock): refused as the flags
  // are
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["network"]["ranges"][0]["bandwidth_Bps"] = 1e-300; }),
             Catch::StartsWith("calibration.network.ranges[0].bandwidth_Bps: expected a number in [0.125, 1e+18]"));
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["reduction"]["Bps"] = 1e-300; }),
             Catch::StartsWith("calibration.reduction.Bps: expected a number in [0.125, 1e+18]"));
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["colour"] = 1; }),
             Catch::StartsWith("calibration.colour: unknown key"));
  // fields kept as a record of the fit are held to their documented ranges too
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["compute"]["kernel"]["r_squared"] = 2; }),
             Catch::StartsWith("calibration.compute.kernel.r_squared: expected a number"));
  CHECK_THAT(error([](nlohmann::json& j) {
               j["calibration"]["compute"]["step_times"] = {{"batch", 0}, {"seconds", {0.1, 0.2}}};
             }),
             Catch::StartsWith("calibration.compute.step_times.batch: expected a whole number"));
  // and every field the loader never reads (records and notes) is checked against its table all the same
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["network"]["ranges"][0]["r_squared"] = "x"; }),
             Catch::StartsWith("calibration.network.ranges[0].r_squared: expected a number"));
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["network"]["ranges"][1]["r_squared"] = nullptr; }),
             Catch::StartsWith("calibration.network.ranges[1].r_squared: expected a number"));
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["network"]["source"] = 5; }),
             Catch::StartsWith("calibration.network.source: expected a string, got 5"));
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["compute"]["kernel"]["model"] = 5; }),
             Catch::StartsWith("calibration.compute.kernel.model: expected a string, got 5"));
  CHECK_THAT(error([](nlohmann::json& j) { j["calibration"]["note"] = 5; }),
             Catch::StartsWith("calibration.note: expected a string, got 5"));
}

TEST_CASE("docs/calibration.md carries the calibration file reference the loader uses") {
  std::ifstream file(std::string(DTSIM_SOURCE_DIR) + "/docs/calibration.md");
  const std::string committed((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  // right after the section's introduction: nothing pasted in between (the top-level help once was)
  CHECK_THAT(committed,
             Catch::Contains("errors naming the JSON path, exit code 2.\n\n" + calibration_fields_markdown()));
  // and the shipped calibration loads
  const Calibration c =
      load_calibration_file(std::string(DTSIM_SOURCE_DIR) + "/scenarios/calibrations/epyc-2core-2026-11-22.json");
  CHECK(c.network.size() == 3);
  CHECK(c.memory_bytes > 1e9);
}
