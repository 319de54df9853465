// `dtsim train SCENARIO`: real SGD on Fashion-MNIST by simulated workers, with time-to-accuracy.
#include <algorithm>
#include <array>
#include <iostream>

#include "calibrate/microbench.hpp"
#include "cli/collective_runs.hpp"
#include "cli/commands.hpp"
#include "cli/flags.hpp"
#include "cli/output_flags.hpp"
#include "reports/format.hpp"
#include "reports/output_file.hpp"
#include "reports/train_report.hpp"
#include "scenarios/idx_reader.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/train_file.hpp"
#include "sim/executor.hpp"
#include "sim/sgd_training.hpp"

namespace dtsim::cli {
namespace {

constexpr auto train_flags = join_flags(
    std::array<FlagSpec, 5>{{
        {"json", "", "", "print one JSON object instead of the table"},
        {"backend", "simgrid|flow", "simgrid",
         "the network the messages move on: simgrid (every message, TCP-like sharing) or flow (max-min fair flows, "
         "faster; the trace then has no per-message records)"},
        {"force", "", "",
         "run even when the estimate says the run needs more memory than is available or over an hour of compute"},
        {"csv", "FILE", "", "also write the evaluation points as CSV (epoch,time_s,train_loss,test_accuracy)"},
        {"trace", "FILE", "",
         "write the run's timeline as Chrome trace-event JSON (Perfetto, chrome://tracing): per worker its gradient "
         "and allreduce (or push and pull) intervals, per busy link its use"},
    }},
    trace_flags);

// Above this a run is refused unless forced: its compute alone, at the rate this machine's kernel reaches on the
// scenario's MLP (timed for about 30 ms before the run), plus SimGrid's cost per message.
constexpr double compute_limit_s = 3600;

// The FLOP/s the kernel reaches on this MLP at the workers' batch on this machine, from a short probe of at most
// probe_flops a call (a smaller batch where the workers' would exceed it). An MLP too large to probe quickly (a
// sample over probe_flops, or a probe of over probe_parameters) gets 1 TFLOP/s, beyond what one core reaches: its
// estimate is then a lower bound.
double kernel_flops_per_s(const TrainConfig& c) {
  constexpr double probe_flops = 2e8;         // about 8 ms at the 25 GFLOP/s a 2-core VM's core reaches
  constexpr double probe_parameters = 2.5e7;  // 100 MB of weights and as much of gradient
  constexpr double unprobed_flops_per_s = 1e12;
  const double per_sample = Mlp::flops_per_sample_of(c.layers);
  if (per_sample > probe_flops || Mlp::parameter_count_of(c.layers) > probe_parameters) return unprobed_flops_per_s;
  const int worker_batch = std::max(1, c.batch / std::max(1, c.workers));
  const int batch = std::max(1, std::min(worker_batch, static_cast<int>(probe_flops / per_sample)));
  return measure_gradient_flops_per_s(c.layers, batch, 0.03);
}

// Refuses, before any model is built, a run that would not fit in the available memory or would take over an hour
// (its compute at the rate this machine's kernel reaches, plus SimGrid's messages); --force runs it anyway.
void check_training_resources(const std::string& path, const TrainScenario& scenario, const Dataset& train,
                              const Dataset& test, bool force, bool on_simgrid) {
  if (force) return;
  const TrainConfig& c = scenario.config;
  const TrainingEstimate e = estimate_training(c, train.count, test.count, train.features);
  std::string layers;
  for (int size : c.layers)
    layers += (layers.empty() ? "" : ", ") + std::to_string(size);
  const std::string what = "the MLP [" + layers + "] (" + format_count(e.parameters) + " parameters) with " +
                           std::to_string(c.workers) + " workers";
  const std::uint64_t have = available_memory_bytes();
  if (have != 0 && e.memory_bytes > static_cast<double>(have)) {
    throw UsageError(path + ": train.layers, train.workers: " + what + " needs about " +
                     format_bytes(static_cast<std::uint64_t>(e.memory_bytes)) +
                     " of memory (each worker's weights, gradient, momentum and batch scratch); this machine has " +
                     format_bytes(have) +
                     " available: use narrower layers or fewer workers, or --force to run it anyway");
  }
  // SimGrid's per-message cost (at least simgrid_seconds_per_message) adds to the compute: 4096 workers' ring on
  // SimGrid moves 33.5 million messages a step
  const double simulation_s = on_simgrid ? e.messages * simgrid_seconds_per_message : 0;
  if (simulation_s > compute_limit_s) {
    throw UsageError(path + ": train.workers, train.epochs: " + what + " moves " + format_count(e.messages) +
                     " simulated messages: at least " + format_seconds(simulation_s) +
                     " on SimGrid (2.5 us a message), above the " + format_seconds(compute_limit_s) +
                     " limit: use --backend flow, fewer workers or fewer epochs, or --force to run it anyway");
  }
  const double flops_per_s = kernel_flops_per_s(c);
  const double seconds = e.flops / flops_per_s + simulation_s;
  if (seconds > compute_limit_s) {
    throw UsageError(path + ": train.layers, train.epochs: " + what + " computes " + format_count(e.flops) +
                     " FLOPs: about " + format_seconds(seconds) + " at the " + format_fixed(flops_per_s / 1e9, 1) +
                     " GFLOP/s this machine's kernel reaches on it" +
                     (simulation_s > 0 ? " (with SimGrid's messages)" : "") + ", above the " +
                     format_seconds(compute_limit_s) +
                     " limit: use narrower layers or fewer epochs, or --force to run it anyway");
  }
}

}  // namespace

const char* train_usage() {
  static const std::string text =
      "usage: dtsim train SCENARIO [flags]\n"
      "Trains the scenario's MLP on Fashion-MNIST with W simulated workers: real gradients from the Eigen kernel,\n"
      "exchanged on the simulated network (SimGrid, or the flow engine) by an allreduce schedule on real buffers or\n"
      "by a parameter server (synchronous, asynchronous or stale-synchronous), while the network advances simulated\n"
      "time. Prints per evaluation point the epoch, simulated time, training loss and test accuracy, the time to\n"
      "the target accuracy and the staleness histogram. Scenarios: scenarios/training/fashion-mnist-sync.json, "
      "fashion-mnist-async.json;\n"
      "`dtsim help train-file` lists every field.\n\n" +
      flags_help(train_flags);
  return text.c_str();
}

const char* train_file_help() {
  static const std::string text =
      "Training files: every field, its default and what it accepts.\n\n" + train_fields_markdown();
  return text.c_str();
}

int train_command(std::span<char* const> args, std::ostream& out) {
  if (args.empty() || std::string_view(args[0]).starts_with("--")) {
    throw UsageError("expected a training file first, e.g. dtsim train scenarios/training/fashion-mnist-sync.json");
  }
  const std::string path = args[0];
  if (path.empty()) throw UsageError("expected a training file first, got ''");
  const Flags flags(train_flags, args.subspan(1));
  const TraceRequest trace = parse_trace_request(flags);
  const TrainBackend backend =
      flags.choice("backend", {"simgrid", "flow"}) == "flow" ? TrainBackend::flow : TrainBackend::simgrid;
  TrainScenario scenario;
  Dataset train;
  Dataset test;
  try {
    scenario = load_train_file(path, DTSIM_DATA_DIR);
    train = fashion_mnist_train(scenario.data_directory);
    test = fashion_mnist_test(scenario.data_directory);
  } catch (const ScenarioError& e) {
    throw UsageError(e.what());
  } catch (const DataError& e) {  // (the data folder is the file's train.data, or the installed dataset's)
    throw UsageError(path + ": train.data: " + e.what());
  }
  check_training_resources(path, scenario, train, test, flags.has("force"), backend == TrainBackend::simgrid);
  // every output's folder before the training, so that a bad one leaves the others as they were
  for (const char* output : {"csv", "trace"}) {
    if (!flags.has(output)) continue;
    try {
      check_output_folder(flags.get(output));
    } catch (const OutputPathError& e) {
      throw UsageError("--" + std::string(output) + ": " + e.what());
    }
  }
  TrainReport report;
  try {
    report = run_sgd_training(scenario.config, train, test, flags.has("trace"), backend);
  } catch (const std::invalid_argument& e) {
    throw UsageError(path + ": " + e.what());
  }
  // the trace first: its size is checked before anything is written, so a refusal leaves the CSV as it was
  if (!trace.path.empty()) {
    const TrainConfig& c = scenario.config;
    const int ranks = c.workers + (c.mode == TrainMode::allreduce ? 0 : 1);  // + the parameter server
    double run_s = 0;
    for (const SpanRecord& span : report.trace.spans)
      run_s = std::max(run_s, span.end_s);
    const std::vector<LinkUsage> links = star_link_usage(report.trace, ranks, c.network.bandwidth_Bps, run_s);
    write_trace_file(trace, report.trace, ranks, links, scenario.name, std::cerr);
  }
  if (flags.has("csv")) {
    try {
      write_file_atomically(flags.get("csv"), [&](std::ostream& file) { file << train_csv(report); });
    } catch (const std::exception& e) {
      throw UsageError("--csv: " + std::string(e.what()));
    }
  }
  if (flags.has("json")) {
    out << train_json(scenario, report).dump() << '\n';
  } else {
    out << train_text(scenario, report);
  }
  return 0;
}

}  // namespace dtsim::cli
