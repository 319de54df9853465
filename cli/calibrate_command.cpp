// `dtsim calibrate`: measures this machine (compute, memory, reduction, MPI ping-pong) or fits external samples, and
// writes the calibration file every prediction can use.
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <sstream>

#include "calibrate/calibration_run.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/network.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "cli/published_library_flag.hpp"
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "scenarios/builtin_files.hpp"
#include "scenarios/calibration_file.hpp"
#include "scenarios/device_file.hpp"
#include "scenarios/input_file.hpp"
#include "scenarios/input_rates_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/published_file.hpp"
#include "scenarios/scenario_file.hpp"
#include "validation/published_cv.hpp"
#include "validation/published_fit.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 9> calibrate_flags{{
    {"published", "", "",
     "instead of measuring this machine: fit the built-in GPUs' efficiency parameters to the fit split of the "
     "published measurements (validation/published/measurements.csv) and write their device files"},
    {"out-dir", "DIR", "build/published-fit",
     "--published: where the device files are written (scenarios/devices to update the shipped ones)"},
    {"prior-weight", "W", "1",
     "--published: how strongly a device's parameters are pulled to the pooled ones (squared log units per row)"},
    {"cross-validate", "K", "",
     "--published: instead of writing device files, fit K times, each without one of K folds of the fit rows (by a "
     "hash of their id), and report the errors on the rows each fit did not see (2 to 20; about 16 s a fold)"},
    published_library_flag,
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

namespace {

void print_cross_validation(const CrossValidation& cv, std::ostream& out) {
  auto line = [&](const std::string& name, const ErrorStats& s) {
    out << "  " << std::left << std::setw(22) << name << std::right << " median |error| " << std::setw(6)
        << format_percent(s.median_abs_error) << ", p90 " << std::setw(6) << format_percent(s.p90_abs_error) << " over "
        << s.rows << " rows\n";
  };
  out << "cross-validation of the published fit: " << cv.folds
      << " folds of the fit split, each row predicted by the fit without its fold\n";
  line("overall", cv.out_of_fold.overall);
  out << "by device:\n";
  for (const auto& [name, s] : cv.out_of_fold.by_device)
    line(name, s);
  out << "by model:\n";
  for (const auto& [name, s] : cv.out_of_fold.by_model)
    line(name, s);
}

int calibrate_published(const Flags& flags, std::ostream& out) {
  const auto started = std::chrono::steady_clock::now();
  PublishedFitOptions options;
  if (flags.has("prior-weight")) {
    options.prior_weight = flags.number("prior-weight", 0, 1000);
  }
  const std::string out_dir = flags.has("out-dir") ? flags.get("out-dir") : "build/published-fit";
  const std::string data_dir = DTSIM_DATA_DIR;
  std::vector<PublishedRow> rows;
  try {
    rows = load_published_table(data_dir + "/validation/published/measurements.csv");
  } catch (const ScenarioError& e) {
    throw UsageError("--published: " + std::string(e.what()));
  }
  // every shipped GPU: fitted where the fit split measured it, pooled otherwise (a CPU is not a GPU's pool)
  std::vector<std::string> names = builtin_names(data_dir, "devices");
  std::erase_if(names, [&](const std::string& name) {
    return load_named_device(name, data_dir, data_dir).kind != DeviceKind::gpu;
  });
  if (flags.has("cross-validate")) {
    if (flags.has("out-dir")) throw UsageError("--out-dir: not with --cross-validate (it writes no device file)");
    const int folds = static_cast<int>(flags.integer("cross-validate", 2, 20));
    const CrossValidation cv =
        cross_validate_published(rows, names, published_mapping_from_flags(flags, data_dir), data_dir, options, folds);
    print_cross_validation(cv, out);
    out << "  in " << format_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count())
        << '\n';
    return 0;
  }
  // the folder made and checked before the fit (tens of seconds), not after it
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) throw UsageError("--out-dir: cannot create " + out_dir + ": " + ec.message());
  try {
    check_output_folder(out_dir + "/input-rates.json");
  } catch (const OutputPathError& error) {
    throw UsageError("--out-dir: " + std::string(error.what()));
  }
  const PublishedFit fit = fit_published(rows, names, published_mapping_from_flags(flags, data_dir), data_dir, options);
  int fit_rows = 0;
  for (const auto& [name, r] : fit.devices)
    fit_rows += r.rows;
  std::vector<OutputFile> files;  // written together once all are made: a failure leaves every earlier file as it was
  std::ostringstream lines;
  out << "fit of the built-in GPUs to the published measurements' fit split (" << fit.before.rows
      << " rows predicted): median |error| " << format_percent(fit.before.median_abs_error) << " -> "
      << format_percent(fit.after.median_abs_error) << ", p90 " << format_percent(fit.before.p90_abs_error) << " -> "
      << format_percent(fit.after.p90_abs_error) << "\n";
  out << "  shared knee t_half " << format_seconds(fit.t_half_s) << "; grouped convolutions' half-rate channels "
      << format_fixed(fit.grouped_half_channels, 2) << " (" << fit.grouped_rows
      << " rows); convolutions' rate in fp16/bf16/fp8 " << format_fixed(fit.rates.conv_tensor, 3) << " ("
      << fit.conv_tensor_rows << " rows), in tf32 " << format_fixed(fit.rates.conv_tf32, 3) << " ("
      << fit.conv_tf32_rows << " rows); GEMMs' in tf32 " << format_fixed(fit.rates.gemm_tf32, 3) << " ("
      << fit.tf32_rows << " rows); pooled efficiency " << format_fixed(fit.pooled.efficiency, 3) << ", tensor "
      << format_fixed(fit.pooled.tensor_efficiency, 3) << ", memory " << format_fixed(fit.pooled.memory_efficiency, 3)
      << "\n";
  out << "  input pipelines on the hosts' cores: " << format_fixed(fit.input.decode_per_core, 1)
      << " images a core a second (" << fit.input.rows << " rows), with AutoAugment "
      << format_fixed(fit.input.decode_per_core_autoaugment, 1) << " (" << fit.input.autoaugment_rows << " rows)\n";
  for (const auto& [name, r] : fit.devices) {
    const std::string file = (builtin_dir(data_dir, "devices") / (name + ".json")).string();
    Device d = load_device_file(file);
    apply_fit(d, r.params, fit.t_half_s, fit.grouped_half_channels, fit.rates);
    d.fit = DeviceFit{"dtsim calibrate --published (fit split of validation/published/measurements.csv)",
                      r.rows > 0 ? r.rows : fit_rows, r.median_error, r.rows == 0};
    std::ifstream in(file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    files.push_back(
        {out_dir + "/" + name + ".json", [written = device_file_with_fit(text, d)](std::ostream& f) { f << written; }});
    lines << "  " << std::left << std::setw(16) << name << std::right;
    if (r.rows > 0) {
      lines << std::setw(3) << r.rows << " rows, median |error| " << std::setw(6) << format_percent(r.median_error);
    } else {
      lines << "  no rows: pooled              ";
    }
    lines << "  efficiency " << format_fixed(r.params.efficiency, 3) << ", tensor "
          << format_fixed(r.params.tensor_efficiency, 3) << ", memory " << format_fixed(r.params.memory_efficiency, 3)
          << "\n";
  }
  if (fit.input.rows > 0 && fit.input.autoaugment_rows > 0) {
    // (the rows loading on their CPUs: validation/published.cpp's cpu_loader_of; shipped as
    // validation/published/input-rates.json)
    PublishedInputRates rates = fit.input;
    rates.generated_by = "dtsim calibrate --published (fit split of validation/published/measurements.csv)";
    // refitting the shipped devices in place: the rates go where dtsim reads them, not among the device files (whose
    // directory holds devices only)
    std::error_code ignored;
    const bool shipped = std::filesystem::weakly_canonical(out_dir, ignored) ==
                         std::filesystem::weakly_canonical(builtin_dir(data_dir, "devices"), ignored);
    const std::string rates_path =
        shipped ? data_dir + "/validation/published/input-rates.json" : out_dir + "/input-rates.json";
    files.push_back({rates_path, [json = input_rates_json(rates).dump(2)](std::ostream& f) { f << json << '\n'; }});
    lines << "  input rates written to " << rates_path << '\n';
  }
  try {
    write_files_atomically(files);
  } catch (const OutputPathError& error) {
    throw UsageError("--out-dir: " + std::string(error.what()));
  }
  out << lines.str();
  out << "  written to " << out_dir << " in "
      << format_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()) << '\n';
  return 0;
}

}  // namespace

int calibrate_command(std::span<char* const> args, std::ostream& out) {
  const Flags flags(calibrate_flags, args);
  const bool published = flags.has("published");
  flags.refuse_unless("out-dir", published, "needs --published");
  flags.refuse_unless("prior-weight", published, "needs --published");
  flags.refuse_unless("cross-validate", published, "needs --published");
  flags.refuse_unless("library", published, "needs --published");
  if (published) {
    for (const char* other : {"quick", "out", "network-csv", "no-network"}) {
      flags.refuse_unless(other, false, "not with --published (it measures nothing here)");
    }
    return calibrate_published(flags, out);
  }
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
