// `dtsim validate`: real MPI runs on an emulated cluster against dtsim's predictions, into reports/validation.md and
// reports/validation.json.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "cli/published_library_flag.hpp"
#include "reports/format.hpp"
#include "reports/framework_report.hpp"
#include "reports/output_file.hpp"
#include "scenarios/collective_table.hpp"
#include "scenarios/heldout_file.hpp"
#include "scenarios/input_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/units.hpp"
#include "sim/executor.hpp"
#include "validation/framework_validation.hpp"
#include "validation/heldout.hpp"
#include "validation/published.hpp"
#include "validation/published_collectives.hpp"
#include "validation/published_report.hpp"
#include "validation/validate.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 13> validate_flags{{
    {"quick", "", "",
     "4 ranks at 1 Gbit/s, 64 KB to 4 MB, every algorithm (about 25 s); otherwise 4 and 8 ranks at 100 Mbit/s and "
     "1 Gbit/s, 64 KB to 64 MB"},
    {"out-dir", "DIR", "reports", "where validation.md and validation.json are written (atomically)"},
    {"max-median-error", "FRACTION", "0.10",
     "exit 1 when the median absolute error over sizes >= 1 MB exceeds this (a number in (0, 100])"},
    {"measured", "FILE", "",
     "instead of running: predict measurements made elsewhere (dtsim-nccl-run's output), no root needed"},
    {"ranks", "P", "",
     "--measured: the ranks (GPUs) the measurements used; --framework: the rank counts to run, e.g. 2,4 (2 to 16)"},
    {"label", "TEXT", "", "--measured: the machine, for the report"},
    {"published", "", "",
     "instead of running: predict the published measurements of real training runs "
     "(validation/published/measurements.csv) and compare; no root needed"},
    {"split", "WHICH", "test", "--published: the rows to predict: test (no fit has seen them), fit, or all"},
    {"write-heldout", "FILE", "",
     "--published (test split): also write the spread of the test rows' errors, which predict and explain quote as "
     "how far to trust a prediction, to FILE (atomically; the shipped one is validation/published/heldout.json)"},
    {"json", "", "",
     "--published or --framework: print one JSON object (every row or case, the summaries) instead of the tables"},
    published_library_flag,
    {"framework", "NAME", "",
     "pytorch: real PyTorch DistributedDataParallel training (gloo) on the emulated cluster against dtsim's step "
     "predictions, into pytorch-validation.md and .json (--quick: 2 and 4 ranks, the MLP, 1 Gbit/s; needs root and "
     "python3-torch); with --repredict, a pytorch-validation.json predicted again"},
    {"repredict", "FILE", "",
     "predict the cases of an earlier validation.json again with the current model (same measurements, same "
     "ping-pong fits) and write validation.md and .json to --out-dir: deterministic, so CI gates the model with it"},
}};

// dtsim validate --framework pytorch [--quick | --repredict FILE] [--out-dir DIR] [--max-median-error F]
int framework_validation(const Flags& flags, double limit, std::ostream& out) {
  if (flags.get("framework") != "pytorch") {
    throw UsageError("--framework: expected pytorch, got '" + flags.get("framework") + "'");
  }
  for (const char* other : {"measured", "label", "published", "split"}) {
    flags.refuse_unless(other, false, "not with --framework");
  }
  const std::string dir = flags.get("out-dir");
  if (!std::filesystem::is_directory(dir)) throw UsageError("--out-dir: " + dir + " is not a directory");
  FrameworkResult result;
  std::string command = "dtsim validate --framework pytorch";
  if (flags.has("repredict")) {
    flags.refuse_unless("quick", false, "not with --repredict (it shortens a real validation)");
    flags.refuse_unless("ranks", false, "not with --repredict (the measurements chose their rank counts)");
    const std::string path = flags.get("repredict");
    nlohmann::json previous;
    try {
      previous = read_json_file(path);
      result = repredict_framework(previous, std::filesystem::path(path).parent_path().string());
    } catch (const ScenarioError& e) {  // names the file
      throw UsageError("--repredict: " + std::string(e.what()));
    } catch (const std::exception& e) {
      throw UsageError("--repredict: " + path + ": " + e.what());
    }
    command = previous.value("command", command) + ", predictions redone by --repredict";
  } else {
    FrameworkPlan plan;
    plan.bin_dir = executable_directory();
    plan.script = std::string(DTSIM_DATA_DIR) + "/validation/emulated-run.sh";
    plan.out_dir = dir;
    if (flags.has("quick")) {
      plan.ranks = {2, 4};
      plan.rates_Mbps = {1000};
      plan.models = {{"mlp", {16, 64}}};
      command += " --quick";
    }
    if (flags.has("ranks")) {
      plan.ranks.clear();
      for (const std::string& value : split(flags.get("ranks"))) {
        try {
          plan.ranks.push_back(static_cast<int>(parse_integer(value, 2, 16)));
        } catch (const std::invalid_argument&) {
          throw UsageError("--ranks: expected rank counts from 2 to 16, e.g. 2,4, got '" + value + "'");
        }
      }
      command += " --ranks " + flags.get("ranks");
    }
    // every rank a Python process with PyTorch loaded: refused up front where this machine cannot hold them
    constexpr std::uint64_t rank_bytes = 600ULL << 20;  // measured RSS of a ResNet-18 rank: about 400 MB
    const int most = *std::max_element(plan.ranks.begin(), plan.ranks.end());
    if (const std::uint64_t available = available_memory_bytes();
        available > 0 && static_cast<std::uint64_t>(most) * rank_bytes > available) {
      throw UsageError("--ranks: " + std::to_string(most) + " ranks need about " +
                       format_bytes(static_cast<std::uint64_t>(most) * rank_bytes) + " of memory (600 MiB a rank); " +
                       "this machine has " + format_bytes(available) + " available");
    }
    if (::geteuid() != 0) throw UsageError("--framework: needs root to create network namespaces (run it as root)");
    if (::access("/usr/bin/python3", X_OK) != 0 ||
        std::system("/usr/bin/python3 -c 'import torch' > /dev/null 2>&1") != 0) {
      throw UsageError(
          "--framework pytorch: /usr/bin/python3 cannot import torch (install python3-torch and "
          "python3-torchvision: bash scripts/install-deps.sh --test)");
    }
    const bool terminal = ::isatty(STDERR_FILENO) != 0;
    const auto started = std::chrono::steady_clock::now();
    result = run_framework_validation(plan, [&](const std::string& line) {
      if (!terminal) return;
      const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      std::cerr << "\r\033[K[" << format_seconds(t) << "] " << line << std::flush;
    });
    if (terminal) std::cerr << "\r\033[K";
  }
  const nlohmann::json doc = framework_json(result, command);
  write_files_atomically(
      {{dir + "/pytorch-validation.json", [&](std::ostream& f) { f << doc.dump(2) << '\n'; }},
       {dir + "/pytorch-validation.md", [&](std::ostream& f) { f << framework_markdown(result, command); }}});
  if (flags.has("json")) {
    out << doc.dump(2) << '\n';
    return result.median_abs_error > limit ? 1 : 0;
  }
  out << "PyTorch DDP validation. "
      << framework_summary(result.median_abs_error, result.p90_abs_error, result.cases.size(),
                           result.exposed_median_points, result.exposed_max_points)
      << "\n  written to " << dir << "/pytorch-validation.md and .json\n";
  return result.median_abs_error > limit ? 1 : 0;
}

}  // namespace

const char* validate_usage() {
  static const std::string text =
      "usage: dtsim validate [flags]\n"
      "Runs the schedules dtsim simulates for real: OpenMPI over TCP between ranks in network namespaces of their "
      "own,\n"
      "linked through a bridge with tbf shaping (needs root). Calibrates alpha and beta from an MPI ping-pong only,\n"
      "predicts every case with the SimGrid executor, and writes the per-case errors with their median and 90th\n"
      "percentile over every size and over sizes >= 1 MB (the gate of --max-median-error).\n\n" +
      flags_help(validate_flags);
  return text.c_str();
}

int validate_command(std::span<char* const> args, std::ostream& out) {
  const Flags flags(validate_flags, args);
  const double limit = flags.number("max-median-error", 0, 100, true);
  if (flags.has("framework")) return framework_validation(flags, limit, out);
  // three modes: --repredict, --measured, or a real validation (root); each refuses the flags of the others
  const bool repredicting = flags.has("repredict");
  const bool measured = flags.has("measured");
  flags.refuse_unless("measured", !repredicting, "not with --repredict (choose one)");
  flags.refuse_unless("ranks", measured, "needs --measured (a real validation chooses its own rank counts)");
  flags.refuse_unless("label", measured, "needs --measured (it names the machine of measurements made elsewhere)");
  flags.refuse_unless(
      "quick", !measured && !repredicting,
      std::string("not with ") + (measured ? "--measured" : "--repredict") + " (it shortens a real validation)");
  const bool published = flags.has("published");
  flags.refuse_unless("split", published, "needs --published");
  flags.refuse_unless("json", published, "needs --published");
  flags.refuse_unless("write-heldout", published, "needs --published");
  flags.refuse_unless("library", published, "needs --published");
  if (published) {
    flags.refuse_unless("measured", false, "not with --published (choose one)");
    flags.refuse_unless("repredict", false, "not with --published (choose one)");
    flags.refuse_unless("quick", false, "not with --published (it shortens a real validation)");
    flags.refuse_unless("out-dir", false, "not with --published (it prints; use --json > FILE)");
    const std::string split = flags.get("split");
    if (split != "test" && split != "fit" && split != "all") {
      throw UsageError("--split: expected test, fit or all, got '" + split + "'");
    }
    if (flags.has("write-heldout") && split != "test") {
      throw UsageError("--write-heldout: takes the test split's errors (no fit has seen those rows), not --split " +
                       split);
    }
    const std::string table = std::string(DTSIM_DATA_DIR) + "/validation/published/measurements.csv";
    std::vector<PublishedRow> rows;
    try {
      rows = load_published_table(table);
    } catch (const ScenarioError& e) {
      throw UsageError("--published: " + std::string(e.what()));
    }
    const PublishedMapping mapping = published_mapping_from_flags(flags, DTSIM_DATA_DIR);
    const PublishedResult result = predict_published(rows, split, mapping, DTSIM_DATA_DIR);
    const std::string collectives_table = std::string(DTSIM_DATA_DIR) + "/validation/published/collectives.csv";
    CollectiveValidation collectives;
    try {
      collectives = predict_collectives(load_collective_table(collectives_table), split, DTSIM_DATA_DIR);
    } catch (const ScenarioError& e) {
      throw UsageError("--published: " + std::string(e.what()));
    }
    if (flags.has("write-heldout")) {
      const HeldoutErrors heldout =
          heldout_errors(result, collectives, mapping,
                         "dtsim validate --published --split test --write-heldout validation/published/heldout.json");
      write_file_atomically(flags.get("write-heldout"),
                            [&](std::ostream& file) { file << heldout_json(heldout).dump(2) << '\n'; });
    }
    if (flags.has("json")) {
      nlohmann::json doc = published_json(result, split);
      doc["collectives"] = collectives_json(collectives, split);
      out << doc.dump(2) << '\n';
    } else {
      out << published_text(result, split) << '\n' << collectives_text(collectives, split);
    }
    return result.overall.median_abs_error > limit ? 1 : 0;
  }
  if (repredicting) {
    const std::string path = flags.get("repredict");
    ValidationResult result;
    nlohmann::json previous;
    try {
      previous = read_json_file(path);
    } catch (const ScenarioError& e) {  // names the file
      throw UsageError("--repredict: " + std::string(e.what()));
    }
    try {
      result = repredict(previous);
    } catch (const std::exception& e) {
      throw UsageError("--repredict: " + path + ": " + e.what());
    }
    ValidationPlan plan;
    plan.repetitions = previous.value("repetitions", 3);
    const std::string command =
        previous.value("command", std::string("dtsim validate")) + ", predictions redone by dtsim validate --repredict";
    const std::string dir = flags.get("out-dir");
    const nlohmann::json doc = validation_json(plan, result, command);  // built before the files are replaced
    write_files_atomically(
        {{dir + "/validation.json", [&](std::ostream& f) { f << doc.dump(2) << '\n'; }},
         {dir + "/validation.md", [&](std::ostream& f) { f << validation_markdown(plan, result, command); }}});
    out << "re-predicted " << result.cases.size() << " cases: " << error_summary(result) << '\n';
    return result.median_abs_error > limit ? 1 : 0;
  }
  if (measured) {
    if (!flags.has("ranks")) throw UsageError("--ranks: needed with --measured");
    const int ranks = static_cast<int>(flags.integer("ranks", 2, 1 << 20));
    if (const std::string problem = input_file_problem(flags.get("measured")); !problem.empty()) {
      throw UsageError("--measured: " + problem);
    }
    ValidationResult result;
    try {
      result = validate_measured(flags.get("measured"), ranks, flags.get("label"));
    } catch (const std::invalid_argument& e) {
      throw UsageError("--measured: " + std::string(e.what()));
    }
    ValidationPlan plan;
    plan.repetitions = 0;
    const std::string command =
        "dtsim validate --measured " + flags.get("measured") + " --ranks " + std::to_string(ranks);
    const std::string dir = flags.get("out-dir");
    write_files_atomically(
        {{dir + "/validation-measured.json",
          [&](std::ostream& f) { f << validation_json(plan, result, command).dump(2) << '\n'; }},
         {dir + "/validation-measured.md", [&](std::ostream& f) { f << validation_markdown(plan, result, command); }}});
    out << "validation of " << result.cases.size() << " measured cases: " << error_summary(result) << '\n';
    return result.median_abs_error > limit ? 1 : 0;
  }
  if (::geteuid() != 0) throw UsageError("validate: needs root to create network namespaces (run it as root)");
  ValidationPlan plan;
  plan.bin_dir = executable_directory();
  plan.script = std::string(DTSIM_DATA_DIR) + "/validation/emulated-run.sh";
  std::string command = "dtsim validate";
  if (flags.has("quick")) {
    plan.ranks = {4};
    plan.rates_Mbps = {1000};
    plan.sizes = {65536, 1048576, 4194304};
    command += " --quick";
  }
  const std::string dir = flags.get("out-dir");
  if (!std::filesystem::is_directory(dir)) throw UsageError("--out-dir: " + dir + " is not a directory");
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const auto started = std::chrono::steady_clock::now();
  const ValidationResult result = run_validation(plan, [&](const std::string& line) {
    if (!terminal) return;
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::cerr << "\r\033[K[" << format_seconds(t) << "] " << line << std::flush;
  });
  if (terminal) std::cerr << "\r\033[K";
  write_files_atomically(
      {{dir + "/validation.json",
        [&](std::ostream& f) { f << validation_json(plan, result, command).dump(2) << '\n'; }},
       {dir + "/validation.md", [&](std::ostream& f) { f << validation_markdown(plan, result, command); }}});
  bool all_exact = true;
  for (const ValidationCase& c : result.cases)
    all_exact = all_exact && c.result_ok;
  out << "validation: " << result.cases.size() << " cases, " << error_summary(result)
      << (all_exact ? "" : "; SOME RESULTS WRONG") << "\n  written to " << dir
      << "/validation.md and validation.json\n";
  if (!all_exact) return 1;
  return result.median_abs_error > limit ? 1 : 0;
}

}  // namespace dtsim::cli
