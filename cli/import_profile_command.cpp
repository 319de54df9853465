// `dtsim import-profile FILE`: what a measured profile (a torch.profiler trace marked by
// validation/pytorch/dtsim_profile.py, or a CSV of layer times) says a training step on one device spends, layer by
// layer, and how PyTorch's DDP would bucket its gradients; optionally written back as the CSV form.
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "models/ddp_buckets.hpp"
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/profile_file.hpp"

namespace dtsim::cli {
namespace {

constexpr std::array<FlagSpec, 2> import_profile_flags{{
    {"json", "", "", "print one JSON object instead of text"},
    {"csv", "FILE", "", "also write the profile as a CSV of layer times (the form --profile and scenarios accept)"},
}};

// DDP's buckets of the profile's fp32 gradients, whole layers in the order backward reached them.
std::vector<std::size_t> ddp_layer_buckets(const MeasuredProfile& p) {
  std::vector<std::uint64_t> bytes;
  for (const std::size_t l : p.ready_order)
    bytes.push_back(static_cast<std::uint64_t>(p.layers[l].params) * 4);
  return ddp_bucket_counts(bytes, ddp_first_bucket_bytes, ddp_bucket_cap_bytes);
}

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return text;
}

}  // namespace

const char* import_profile_usage() {
  static const std::string text =
      "usage: dtsim import-profile FILE [flags]\n"
      "Reads one device's measured training step: a torch.profiler trace (.json) of steps marked by\n"
      "validation/pytorch/dtsim_profile.py, or a CSV of layer times (.csv); docs/profiles.md says which events are\n"
      "read. Prints each layer's forward and backward time and parameters, the optimizer and the rest of the step,\n"
      "the order gradients became ready, and PyTorch DDP's buckets (25 MiB, the first 1 MiB). `dtsim predict\n"
      "--profile FILE` (or a scenario's \"profile\") predicts a cluster from it.\n\n" +
      flags_help(import_profile_flags);
  return text.c_str();
}

int import_profile_command(std::span<char* const> args, std::ostream& out) {
  if (args.empty() || std::string_view(args[0]).starts_with("--")) {
    throw UsageError("expected a profile first, e.g. dtsim import-profile tests/data/pytorch/mlp-trace.json");
  }
  const std::string path = args[0];
  const Flags flags(import_profile_flags, args.subspan(1));
  MeasuredProfile p;
  try {
    p = load_profile_file(path);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  }
  const std::vector<std::size_t> buckets = ddp_layer_buckets(p);
  if (flags.has("csv")) {
    try {
      write_file_atomically(flags.get("csv"), [&](std::ostream& file) { write_profile_csv(p, file); });
    } catch (const std::exception& e) {
      throw UsageError("--csv: " + std::string(e.what()));
    }
  }
  if (flags.has("json")) {
    nlohmann::json layers = nlohmann::json::array();
    for (const MeasuredLayer& l : p.layers) {
      layers.push_back(
          {{"name", l.name}, {"params", l.params}, {"forward_s", l.forward_s}, {"backward_s", l.backward_s}});
    }
    out << nlohmann::json{{"source", p.source},
                          {"batch", p.batch},
                          {"steps", p.steps},
                          {"layers", layers},
                          {"ready_order", p.ready_order},
                          {"forward_s", p.forward_s()},
                          {"backward_s", p.backward_s()},
                          {"optimizer_s", p.optimizer_s},
                          {"overhead_s", p.overhead_s},
                          {"step_s", p.step_s()},
                          {"ddp_bucket_layers", buckets}}
               .dump()
        << '\n';
    return 0;
  }
  out << "profile " << p.source << ": batch " << p.batch << ", " << p.steps << (p.steps == 1 ? " step" : " steps")
      << " (medians)\n";
  out << "  step       " << format_seconds(p.step_s()) << ": forward " << format_seconds(p.forward_s()) << ", backward "
      << format_seconds(p.backward_s()) << ", optimizer " << format_seconds(p.optimizer_s) << ", overhead "
      << format_seconds(p.overhead_s) << " (" << format_percent(p.overhead_s / p.step_s()) << ")\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-24s %14s %12s %12s\n", "layer", "params", "forward ms", "backward ms");
  out << line;
  for (const MeasuredLayer& l : p.layers) {
    std::snprintf(line, sizeof line, "  %-24s %14.0f %12s %12s\n", l.name.c_str(), l.params,
                  milliseconds(l.forward_s).c_str(), milliseconds(l.backward_s).c_str());
    out << line;
  }
  out << "  gradients ready in backward order:";
  for (const std::size_t l : p.ready_order)
    out << ' ' << p.layers[l].name;
  out << "\n  DDP buckets (fp32 gradients, 25 MiB, the first 1 MiB):";
  std::size_t next = 0;
  for (const std::size_t count : buckets) {
    double bytes = 0;
    for (std::size_t i = next; i < next + count; ++i)
      bytes += p.layers[p.ready_order[i]].params * 4;
    out << ' ' << format_bytes(static_cast<std::uint64_t>(bytes)) << " (" << count
        << (count == 1 ? " layer)" : " layers)");
    next += count;
  }
  out << '\n';
  return 0;
}

}  // namespace dtsim::cli
