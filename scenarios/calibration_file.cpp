#include "scenarios/calibration_file.hpp"

#include <array>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "scenarios/json_reader.hpp"
#include "scenarios/units.hpp"

namespace dtsim {
namespace {

constexpr double tiny = 1e-300;
// Rates as the flags take them (1 bit/s to 10^18 bytes/s; a FLOP rate up to 10^21), times up to 10^9 s: a rate of
// 1e-300 would have every executor wait forever.
constexpr double min_rate = min_bandwidth_Bps;
constexpr double max_rate = max_bandwidth_Bps;
constexpr double max_flop_rate = 1e21;

constexpr std::array<FieldSpec, 6> kernel_fields{{
    value_field("model", FieldType::text, "", "what was timed"),
    value_field("samples", FieldType::raw, "", "[batch, seconds] pairs"),
    ranged_field("overhead_s", FieldType::number, "", "fitted fixed time of a step", 0, max_duration_s),
    ranged_field("per_sample_s", FieldType::number, "", "fitted time per sample", tiny, max_duration_s),
    ranged_field("r_squared", FieldType::number, "", "goodness of the fit", -unbounded, 1),
    value_field("residuals", FieldType::raw, "", "measured minus fitted seconds, per sample"),
}};

constexpr std::array<FieldSpec, 2> step_time_fields{{
    ranged_field("batch", FieldType::integer, "", "the batch the steps ran at", 1, 1 << 24),
    value_field("seconds", FieldType::raw, "", "each step's time, in the order measured (at least 2)"),
}};

constexpr std::array<FieldSpec, 4> calibration_compute_fields{{
    value_field("gemm", FieldType::raw, "", "the GEMM shapes and their FLOP/s"),
    ranged_field("gemm_flops_per_s", FieldType::number, "", "the best GEMM rate", 1, max_flop_rate),
    object_field("kernel", true, "the SGD kernel's step time against batch size", kernel_fields),
    object_field("step_times", false,
                 "consecutive SGD kernel steps at one batch, each timed: the machine's step-time distribution "
                 "(a scenario's empirical jitter; absent in calibrations before it was measured)",
                 step_time_fields),
}};

constexpr std::array<FieldSpec, 1> memory_fields{{
    ranged_field("triad_Bps", FieldType::number, "", "STREAM-like triad bandwidth", min_rate, max_rate),
}};

constexpr std::array<FieldSpec, 1> reduction_fields{{
    ranged_field("Bps", FieldType::number, "", "bytes of float arrays summed per second", min_rate, max_rate),
}};

constexpr std::array<FieldSpec, 5> range_fields{{
    ranged_field("min_bytes", FieldType::number, "", "the range starts at this message size", 0, unbounded),
    ranged_field("alpha_s", FieldType::number, "", "fitted latency", 0, max_duration_s),
    ranged_field("bandwidth_Bps", FieldType::number, "", "fitted bandwidth (1 / slope)", min_rate, max_rate),
    ranged_field("r_squared", FieldType::number, "", "goodness of the fit", -unbounded, 1),
    value_field("residuals", FieldType::raw, "", "measured minus fitted seconds, per sample"),
}};

constexpr std::array<FieldSpec, 2> message_rate_fields{{
    value_field("samples", FieldType::raw, "", "[messages sent at once, seconds] pairs (dtsim-mpi-pingpong msgrate)"),
    ranged_field("message_gap_s", FieldType::number, "",
                 "the per-message gap g fitted to them: what each further message of a step costs", 0, max_duration_s),
}};

constexpr std::array<FieldSpec, 4> calibration_network_fields{{
    value_field("source", FieldType::text, "", "what was measured"),
    value_field("samples", FieldType::raw, "", "[bytes, seconds] pairs"),
    object_list_field("ranges", "the piecewise fits, by ascending min_bytes", range_fields),
    object_field("message_rate", false,
                 "the message-rate test and its per-message gap (absent: not measured, the gap is then 0)",
                 message_rate_fields),
}};

constexpr std::array<FieldSpec, 9> calibration_fields{{
    value_field("machine", FieldType::raw, "", "hostname, cpu, cores, memory_bytes"),
    value_field("date", FieldType::text, "", "when it was measured (UTC)"),
    value_field("quick", FieldType::raw, "false", "whether --quick was used"),
    value_field("versions", FieldType::raw, "", "dtsim, Eigen, SimGrid and MPI versions"),
    object_field("compute", true, "compute rates", calibration_compute_fields),
    object_field("memory", true, "memory bandwidth", memory_fields),
    object_field("reduction", true, "reduction rate", reduction_fields),
    object_field("network", false, "network fits (absent when not measured)", calibration_network_fields),
    value_field("note", FieldType::text, "(none)", "free text"),
}};

constexpr std::array<FieldSpec, 1> calibration_document_fields{{
    object_field("calibration", true, "the calibration", calibration_fields),
}};

}  // namespace

Calibration parse_calibration(const nlohmann::json& document) {
  const JsonObject root(document, "", calibration_document_fields);
  const JsonObject c = root.object("calibration");
  Calibration out;
  const auto machine = document["calibration"].find("machine");
  if (machine == document["calibration"].end()) throw ScenarioError("calibration.machine: missing; expected an object");
  out.machine = machine->dump();
  if (!machine->is_object()) throw ScenarioError("calibration.machine: expected an object");
  out.cpu = machine->value("cpu", std::string("unknown"));
  const auto memory = machine->find("memory_bytes");
  if (memory != machine->end()) {
    if (!memory->is_number() || memory->get<double>() < 0) {
      throw ScenarioError("calibration.machine.memory_bytes: expected a number >= 0, got " + memory->dump());
    }
    out.memory_bytes = memory->get<double>();
  }
  out.date = c.text("date");
  const JsonObject compute = c.object("compute");
  out.gemm_flops_per_s = compute.number("gemm_flops_per_s");
  const JsonObject kernel = compute.object("kernel");
  out.kernel_overhead_s = kernel.number("overhead_s");
  out.kernel_per_sample_s = kernel.number("per_sample_s");
  kernel.number("r_squared");  // (read for its range: a record of the fit, not used)
  if (compute.has("step_times")) {
    const JsonObject steps = compute.object("step_times");
    steps.integer("batch");  // (read for its range: the batch the steps ran at, a record)
    const nlohmann::json& seconds = steps.json("seconds");
    if (!seconds.is_array() || seconds.size() < 2) {
      throw ScenarioError(steps.path_of("seconds") + ": expected a list of at least 2 step times in seconds");
    }
    for (std::size_t i = 0; i < seconds.size(); ++i) {
      if (!seconds[i].is_number() || !(seconds[i].get<double>() > 0)) {
        throw ScenarioError(steps.path_of("seconds") + "[" + std::to_string(i) +
                            "]: expected a positive number of seconds, got " + seconds[i].dump());
      }
      out.step_times_s.push_back(seconds[i].get<double>());
    }
  }
  out.memory_Bps = c.object("memory").number("triad_Bps");
  out.reduce_Bps = c.object("reduction").number("Bps");
  if (c.has("network")) {
    const JsonObject network = c.object("network");
    const std::vector<JsonObject> ranges = network.objects("ranges");
    if (ranges.empty()) throw ScenarioError(network.path_of("ranges") + ": expected at least one range");
    for (const JsonObject& r : ranges) {
      NetworkRange range{r.number("min_bytes"), r.number("alpha_s"), r.number("bandwidth_Bps")};
      if (!out.network.empty() && range.min_bytes <= out.network.back().min_bytes) {
        throw ScenarioError(r.path_of("min_bytes") + ": expected ranges by ascending min_bytes");
      }
      out.network.push_back(range);
    }
    if (network.has("message_rate")) out.message_gap_s = network.object("message_rate").number("message_gap_s");
  }
  return out;
}

Calibration load_calibration_file(const std::string& path) {
  return parse_json_file(path, [&](const nlohmann::json& document) { return parse_calibration(document); });
}

std::string calibration_fields_markdown() { return fields_markdown("calibration", calibration_fields); }

}  // namespace dtsim
