// `dtsim calibrate`: measures this machine (compute, memory, reduction, MPI ping-pong) or fits external samples, and
// writes the calibration file every prediction can use.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "calibrate/calibration_run.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/network.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/input_file.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 4> calibrate_flags{{
    {"quick", "", "", "shorter measurements (about 6 s instead of about 20 s on a 2-core machine)"},
    {"out", "FILE", "calibration.json", "where the calibration file is written (atomically)"},
    {"network-csv", "FILE", "",
     "fit the network from (bytes,seconds) lines measured elsewhere (osu_latency, nccl-tests) instead of MPI"},
    {"no-network", "", "", "skip the network (no MPI ping-pong, no CSV)"},
}};

}  // namespace

const char* calibrate_usage() {
  static const std::string text =
      "usage: dtsim calibrate [flags]\n"
      "Measures this machine: Eigen GEMM FLOP/s (the SGD kernel's shapes and large ones), the SGD kernel's step time\n"
      "against batch size (fitted as overhead + per-sample cost), a STREAM-like triad, the float reduction rate, and\n"
      "the network by MPI ping-pong between two processes (1 B to 64 MB, fitted piecewise into alpha and bandwidth\n"
      "with R-squared and residuals). Writes a calibration file that --calibration (collective, compare) and scenario\n"
      "files use instead of datasheet defaults.\n\n" +
      flags_help(calibrate_flags);
  return text.c_str();
}

const char* calibration_file_help() {
  static const std::string text =
      "Calibration files: every field, its default and what it accepts.\n\n" + calibration_fields_markdown();
  return text.c_str();
}

int calibrate_command(std::span<char* const> args, std::ostream& out) {
  const Flags flags(calibrate_flags, args);
  CalibrateOptions options;
  options.quick = flags.has("quick");
  options.measure_network = !flags.has("no-network");
  if (flags.has("network-csv")) {
    if (flags.has("no-network")) throw UsageError("--network-csv: not with --no-network");
    options.network_csv = flags.get("network-csv");
    if (const std::string problem = input_file_problem(options.network_csv); !problem.empty()) {
      throw UsageError("--network-csv: " + problem);  // before minutes of measuring
    }
  }
  options.pingpong_binary = executable_directory() + "/dtsim-mpi-pingpong";
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  options.progress = [&](const std::string& line) {
    if (!terminal) return;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cerr << "\r\033[K[" << format_seconds(t) << "] " << line << std::flush;
  };
  nlohmann::json doc;
  try {
    doc = run_calibration(options);
  } catch (const CalibrationInputError& e) {
    if (terminal) std::cerr << "\r\033[K";
    throw UsageError((flags.has("network-csv") ? "--network-csv: " : "") + std::string(e.what()));
  } catch (const FitError& e) {
    if (terminal) std::cerr << "\r\033[K";
    throw UsageError(std::string("fit refused: ") + e.what());
  }
  if (terminal) std::cerr << "\r\033[K";
  const std::string path = flags.get("out");
  try {
    write_file_atomically(path, [&](std::ostream& file) { file << doc.dump(2) << '\n'; });
  } catch (const std::exception& e) {
    throw UsageError("--out: " + std::string(e.what()));
  }
  const nlohmann::json& c = doc["calibration"];
  out << "calibration of " << c["machine"]["cpu"].get<std::string>() << " (" << c["machine"]["cores"] << " cores), "
      << c["date"].get<std::string>() << (options.quick ? ", quick" : "") << '\n';
  char flops[32];
  std::snprintf(flops, sizeof flops, "%.2f GFLOP/s", c["compute"]["gemm_flops_per_s"].get<double>() / 1e9);
  out << "  compute    best GEMM " << flops
      << "; SGD kernel step = " << format_seconds(c["compute"]["kernel"]["overhead_s"].get<double>()) << " + "
      << format_seconds(c["compute"]["kernel"]["per_sample_s"].get<double>()) << " x batch (R^2 "
      << c["compute"]["kernel"]["r_squared"].get<double>() << ")\n";
  out << "  memory     triad " << format_rate_Bps(c["memory"]["triad_Bps"].get<double>()) << "; reduction "
      << format_rate_Bps(c["reduction"]["Bps"].get<double>()) << '\n';
  if (c.contains("network")) {
    for (const auto& r : c["network"]["ranges"]) {
      out << "  network    from " << format_bytes(static_cast<std::uint64_t>(r["min_bytes"].get<double>()))
          << ": alpha " << format_seconds(r["alpha_s"].get<double>()) << ", bandwidth "
          << format_rate_Bps(r["bandwidth_Bps"].get<double>()) << " (R^2 " << r["r_squared"].get<double>() << ")\n";
    }
  }
  out << "  written to " << path << " in "
      << format_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()) << '\n';
  return 0;
}

}  // namespace dtsim::cli
