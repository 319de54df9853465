// `dtsim report RESULT.json... -o report.html`: one self-contained HTML page with charts from result files.
#include <array>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "reports/html_report.hpp"
#include "reports/output_file.hpp"
#include "scenarios/json_reader.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 1> report_flags{{
    {"output", "FILE", "the first RESULT with .html for .json",
     "where to write the HTML page (also -o FILE); written atomically"},
}};

}  // namespace

const char* report_usage() {
  static const std::string text =
      "usage: dtsim report RESULT.json [RESULT.json...] [-o report.html]\n"
      "Renders result files as one self-contained HTML page (inline SVG, no scripts, no network access):\n"
      "  predict --json: speedup and efficiency against accelerators with the ideal line, a stacked breakdown of the\n"
      "    step per size (forward, backward, exposed communication, input stall, optimizer), the busiest links;\n"
      "  compare --json: time against message size per rank count (log-log, crossovers marked), a winner map over\n"
      "    ranks x sizes;\n"
      "  train --json: test accuracy and training loss against simulated time (several runs share the charts);\n"
      "  validate's validation.json: predicted against measured time and the error table;\n"
      "  validate --published --json: predicted against measured throughput of the published runs (log-log, a\n"
      "    colour per device, y = x and 20% either side), median and p90 |error| per device, per model and overall,\n"
      "    the 10 worst rows with links to their sources, the rows not modelled counted by reason.\n\n" +
      flags_help(report_flags);
  return text.c_str();
}

int report_command(std::span<char* const> args, std::ostream& out) {
  std::vector<std::string> inputs;
  std::vector<char*> rest;  // the flags, with -o spelled --output
  static char output_flag[] = "--output";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "-o" || a == "--output") {
      rest.push_back(output_flag);
      if (i + 1 < args.size()) rest.push_back(args[++i]);
    } else if (a.starts_with("-")) {
      rest.push_back(args[i]);
    } else if (a.empty()) {
      throw UsageError("expected result files, got ''");
    } else {
      inputs.emplace_back(a);
    }
  }
  const Flags flags(report_flags, rest);
  if (inputs.empty())
    throw UsageError("expected at least one result file, e.g. dtsim report predict.json -o report.html");
  ReportContent content;
  for (const std::string& path : inputs) {
    try {
      add_result(read_json_file(path), path, content);
    } catch (const ScenarioError& e) {  // unreadable or not JSON (the message names the file)
      throw UsageError(e.what());
    } catch (const ResultFileError& e) {
      throw UsageError(path + ": " + e.what());
    }
  }
  std::string output = flags.has("output") ? flags.get("output") : inputs.front();
  if (!flags.has("output")) {
    if (output.ends_with(".json")) output.resize(output.size() - 5);
    output += ".html";
  }
  for (const std::string& path : inputs) {  // a page written over a result it was drawn from would lose the result
    std::error_code ec;
    if (std::filesystem::equivalent(output, path, ec)) {
      throw UsageError("--output: " + output + " is the result file " + path +
                       " itself; name another file (e.g. report.html)");
    }
  }
  try {
    write_file_atomically(output, [&](std::ostream& file) { file << render_report_html(content); });
  } catch (const std::runtime_error& e) {
    throw UsageError(std::string("--output: ") + e.what());
  }
  out << "wrote " << output << " from " << inputs.size() << " result file" << (inputs.size() > 1 ? "s" : "") << '\n';
  return 0;
}

}  // namespace dtsim::cli
