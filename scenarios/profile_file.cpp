#include "scenarios/profile_file.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <string_view>
#include <unordered_set>

#include "scenarios/csv_table.hpp"
#include "scenarios/input_file.hpp"
#include "scenarios/json_reader.hpp"
#include "scenarios/units.hpp"

namespace dtsim {
namespace {

constexpr std::string_view forward_prefix = "dtsim.forward:";
constexpr std::string_view backward_prefix = "dtsim.backward:";
constexpr std::string_view batch_prefix = "dtsim.batch=";
constexpr long long max_profile_batch = 1LL << 30;
constexpr std::string_view step_prefix = "ProfilerStep#";
constexpr std::string_view optimizer_prefix = "Optimizer.step#";
constexpr std::string_view autograd_prefix = "autograd::engine::evaluate_function: ";

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// A whole number in [low, high] from all of `text`, or -1.
long long whole(std::string_view text, long long low, long long high) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < low || value > high) return -1;
  return value;
}

// A profile is a measurement of a step: one whose parts add up to no time measured nothing (and would give every
// prediction an infinite rate).
void check_measured_time(const MeasuredProfile& p, const std::string& path) {
  if (!(p.step_s() > 0)) {
    throw ScenarioError(path + ": its layers' forward and backward, the optimizer and the overhead add up to 0 s: " +
                        "a profile needs the measured time of a step");
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

struct Event {
  std::string name;
  double ts_us = 0;
  double dur_us = 0;
  double end_us() const { return ts_us + dur_us; }
};

// One step's measurements, by layer name.
struct StepTimes {
  int batch = 0;
  std::vector<std::string> order;  // layers by their first forward scope
  std::map<std::string, double> params, forward_s, backward_s;
  std::vector<std::string> ready;  // layers by their first backward instant
  double optimizer_s = 0;
  double overhead_s = 0;
};

std::vector<Event> trace_events(const nlohmann::json& document, const std::string& path) {
  const nlohmann::json* list = &document;
  if (document.is_object()) {
    const auto it = document.find("traceEvents");
    if (it == document.end()) throw ScenarioError(path + ": not a trace-event file (an object without traceEvents)");
    list = &*it;
  }
  if (!list->is_array()) {
    throw ScenarioError(path + ": not a trace-event file (expected an array of events or an object with traceEvents)");
  }
  std::vector<Event> events;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& e = (*list)[i];
    const std::string where = path + ": traceEvents[" + std::to_string(i) + "]";
    if (!e.is_object()) throw ScenarioError(where + ": expected an event object");
    const auto ph = e.find("ph");
    if (ph == e.end() || !ph->is_string() || *ph != "X") continue;  // only complete events have durations
    const auto name = e.find("name");
    const auto ts = e.find("ts");
    const auto dur = e.find("dur");
    // (times within 1e9 s, as every duration dtsim reads: a larger one is no measurement of a step)
    if (name == e.end() || !name->is_string() || ts == e.end() || !ts->is_number() ||
        !(std::fabs(ts->get<double>()) <= max_duration_s * 1e6) || dur == e.end() || !dur->is_number() ||
        !(dur->get<double>() >= 0) || !(dur->get<double>() <= max_duration_s * 1e6)) {
      throw ScenarioError(where + ": a complete event (ph X) needs a name, a ts and a dur in [0, 1e15] (microseconds)");
    }
    const auto cat = e.find("cat");
    if (cat != e.end() && cat->is_string() && (*cat == "kernel" || *cat == "gpu_memcpy")) {
      throw ScenarioError(where + ": GPU kernels in the trace: only CPU traces are read yet (the layers' CPU " +
                          "scopes do not time the GPU's kernels)");
    }
    events.push_back({name->get<std::string>(), ts->get<double>(), dur->get<double>()});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.ts_us < b.ts_us; });
  return events;
}

StepTimes read_step(const std::string& where, const Event& step, std::span<const Event> events) {
  StepTimes t;
  std::vector<const Event*> forwards, markers;
  double autograd_end_us = -1;
  for (const Event& e : events) {
    if (e.ts_us < step.ts_us || e.ts_us > step.end_us() || &e == &step) continue;
    if (starts_with(e.name, forward_prefix)) forwards.push_back(&e);
    if (starts_with(e.name, backward_prefix)) markers.push_back(&e);
    if (starts_with(e.name, autograd_prefix)) autograd_end_us = std::max(autograd_end_us, e.end_us());
    if (starts_with(e.name, optimizer_prefix)) t.optimizer_s += e.dur_us * 1e-6;
    if (starts_with(e.name, batch_prefix)) {
      const long long b = whole(std::string_view(e.name).substr(batch_prefix.size()), 1, max_profile_batch);
      if (b < 0 || t.batch != 0) {
        throw ScenarioError(where + ": expected one \"dtsim.batch=B\" event (B a whole number in [1, " +
                            std::to_string(max_profile_batch) + "]), got \"" + e.name + "\"" +
                            (t.batch != 0 ? " a second time" : ""));
      }
      t.batch = static_cast<int>(b);
    }
  }
  if (forwards.empty()) {
    throw ScenarioError(where + ": names no layer: no \"dtsim.forward:NAME#params=N\" scope (mark the model with " +
                        "validation/pytorch/dtsim_profile.py's annotate())");
  }
  if (markers.empty()) {
    throw ScenarioError(where + ": no backward: no \"dtsim.backward:NAME\" event (the step must run backward; " +
                        "mark the model with annotate())");
  }
  if (t.batch == 0) throw ScenarioError(where + ": no \"dtsim.batch=B\" event (call dtsim_profile.mark_batch)");
  double busy_s = t.optimizer_s;
  const Event* open = nullptr;  // the forward scope last seen, to refuse nested layers
  for (const Event* e : forwards) {
    const std::string_view rest = std::string_view(e->name).substr(forward_prefix.size());
    const std::size_t hash = rest.find("#params=");
    const long long params = hash == std::string_view::npos ? -1 : whole(rest.substr(hash + 8), 0, 1LL << 50);
    if (hash == 0 || params < 0) {
      throw ScenarioError(where + ": expected \"dtsim.forward:NAME#params=N\" (N a whole number), got \"" + e->name +
                          "\"");
    }
    const std::string name(rest.substr(0, hash));
    if (open != nullptr && e->ts_us < open->end_us()) {
      throw ScenarioError(where + ": layer " + name + "'s forward runs inside " + open->name +
                          "'s: name layers that do not nest");
    }
    open = e;
    if (!t.params.contains(name)) {
      t.order.push_back(name);
      t.params[name] = static_cast<double>(params);
    } else if (t.params[name] != static_cast<double>(params)) {
      throw ScenarioError(where + ": layer " + name + " is named with two parameter counts");
    }
    t.forward_s[name] += e->dur_us * 1e-6;
    busy_s += e->dur_us * 1e-6;
  }
  if (autograd_end_us < markers.back()->ts_us) {
    throw ScenarioError(where + ": no \"autograd::engine::evaluate_function: ...\" event ends after the last " +
                        "backward instant: the backward pass's end is not in the trace");
  }
  for (std::size_t i = 0; i < markers.size(); ++i) {
    const std::string name(std::string_view(markers[i]->name).substr(backward_prefix.size()));
    if (!t.params.contains(name)) {
      throw ScenarioError(where + ": \"" + markers[i]->name + "\" names a layer without a forward scope");
    }
    if (std::find(t.ready.begin(), t.ready.end(), name) == t.ready.end()) t.ready.push_back(name);
    const double until_us = i + 1 < markers.size() ? markers[i + 1]->ts_us : autograd_end_us;
    t.backward_s[name] += (until_us - markers[i]->ts_us) * 1e-6;
    busy_s += (until_us - markers[i]->ts_us) * 1e-6;
  }
  t.overhead_s = step.dur_us * 1e-6 - busy_s;
  if (t.overhead_s < -1e-9) {
    throw ScenarioError(where + ": its layers' forward scopes, backward intervals and optimizer add up to more " +
                        "than the step: they overlap");
  }
  t.overhead_s = std::max(0.0, t.overhead_s);
  return t;
}

}  // namespace

MeasuredProfile read_profile_trace(const nlohmann::json& document, const std::string& path) {
  const std::vector<Event> events = trace_events(document, path);
  std::vector<const Event*> steps;
  for (const Event& e : events) {
    if (starts_with(e.name, step_prefix)) steps.push_back(&e);
  }
  if (steps.empty()) {
    throw ScenarioError(path + ": holds no complete step: no \"ProfilerStep#K\" event (record with torch.profiler " +
                        "and call prof.step() after each step)");
  }
  std::vector<StepTimes> times;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const std::string where = path + ": " + steps[i]->name;
    if (i > 0 && steps[i]->ts_us < steps[i - 1]->end_us()) {
      throw ScenarioError(where + " starts before " + steps[i - 1]->name + " ends: overlapping steps");
    }
    times.push_back(read_step(where, *steps[i], events));
    if (times.back().order != times.front().order || times.back().batch != times.front().batch ||
        times.back().params != times.front().params) {
      throw ScenarioError(where + ": its layers, their parameters or its batch differ from " + steps.front()->name +
                          "'s");
    }
  }
  MeasuredProfile p;
  p.source = path;
  p.batch = times.front().batch;
  p.steps = static_cast<int>(times.size());
  auto over_steps = [&](auto get) {
    std::vector<double> values;
    for (const StepTimes& t : times)
      values.push_back(get(t));
    return median(values);
  };
  for (const std::string& name : times.front().order) {
    MeasuredLayer layer;
    layer.name = name;
    layer.params = times.front().params.at(name);
    layer.forward_s = over_steps([&](const StepTimes& t) { return t.forward_s.at(name); });
    layer.backward_s = over_steps([&](const StepTimes& t) {
      const auto it = t.backward_s.find(name);
      return it == t.backward_s.end() ? 0.0 : it->second;
    });
    p.layers.push_back(layer);
  }
  for (const std::string& name : times.front().ready) {
    const auto it = std::find(times.front().order.begin(), times.front().order.end(), name);
    p.ready_order.push_back(static_cast<std::size_t>(it - times.front().order.begin()));
  }
  p.optimizer_s = over_steps([](const StepTimes& t) { return t.optimizer_s; });
  p.overhead_s = over_steps([](const StepTimes& t) { return t.overhead_s; });
  check_measured_time(p, path);
  return p;
}

namespace {

double csv_milliseconds(const std::string& text, const std::string& where) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0) || !(value * 1e-3 <= max_duration_s)) {
    throw ScenarioError(where + ": expected milliseconds, a number in [0, 1e12], got '" + text + "'");
  }
  return value * 1e-3;
}

}  // namespace

MeasuredProfile read_profile_csv(std::istream& in, const std::string& path) {
  static const std::vector<std::string> columns{"layer", "params", "forward_ms", "backward_ms"};
  MeasuredProfile p;
  p.source = path;
  p.steps = 1;
  bool header = false;
  std::unordered_set<std::string> names;     // the layers read so far
  std::unordered_set<std::string> settings;  // the settings read so far
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string at = path + ":" + std::to_string(number);
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line[0] == '#') {
      const std::size_t first = line.find_first_not_of("# \t");
      if (first == std::string::npos) throw ScenarioError(at + ": an empty setting (expected # key=value)");
      const std::string setting = line.substr(first);
      const std::size_t eq = setting.find('=');
      const std::string key = setting.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : setting.substr(eq + 1);
      if (header) throw ScenarioError(at + ": settings (# key=value) come before the header");
      if (!settings.insert(key).second) throw ScenarioError(at + ": " + key + " given twice (each setting once)");
      if (key == "batch") {
        const long long b = whole(value, 1, max_profile_batch);
        if (b < 0) {
          throw ScenarioError(at + ": batch: expected a whole number in [1, " + std::to_string(max_profile_batch) +
                              "], got '" + value + "'");
        }
        p.batch = static_cast<int>(b);
      } else if (key == "optimizer_ms") {
        p.optimizer_s = csv_milliseconds(value, at + " (optimizer_ms)");
      } else if (key == "overhead_ms") {
        p.overhead_s = csv_milliseconds(value, at + " (overhead_ms)");
      } else {
        throw ScenarioError(at + ": unknown setting '" + key + "' (accepted: batch, optimizer_ms, overhead_ms)");
      }
      continue;
    }
    const std::vector<std::string> fields = split_csv_record(line, at);
    if (!header) {
      if (fields != columns) throw ScenarioError(at + ": expected the header layer,params,forward_ms,backward_ms");
      header = true;
      continue;
    }
    if (fields.size() != columns.size()) {
      throw ScenarioError(at + ": expected 4 fields (layer,params,forward_ms,backward_ms), got " +
                          std::to_string(fields.size()));
    }
    MeasuredLayer layer;
    layer.name = fields[0];
    if (layer.name.empty()) throw ScenarioError(at + " (layer): expected a name");
    if (!names.insert(layer.name).second) {
      throw ScenarioError(at + " (layer): '" + layer.name + "' appears twice");
    }
    const long long params = whole(fields[1], 0, 1LL << 50);
    if (params < 0) throw ScenarioError(at + " (params): expected a whole number >= 0, got '" + fields[1] + "'");
    layer.params = static_cast<double>(params);
    layer.forward_s = csv_milliseconds(fields[2], at + " (forward_ms)");
    layer.backward_s = csv_milliseconds(fields[3], at + " (backward_ms)");
    p.layers.push_back(layer);
  }
  if (!header) throw ScenarioError(path + ": no header layer,params,forward_ms,backward_ms");
  if (p.layers.empty()) throw ScenarioError(path + ": no layer rows");
  if (p.batch == 0) throw ScenarioError(path + ": no '# batch=B' line (the samples the times were measured at)");
  for (std::size_t l = p.layers.size(); l-- > 0;)
    p.ready_order.push_back(l);
  check_measured_time(p, path);
  return p;
}

namespace {

std::string milliseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", seconds * 1e3);
  return text;
}

}  // namespace

void write_profile_csv(const MeasuredProfile& p, std::ostream& out) {
  out << "# batch=" << p.batch << "\n# optimizer_ms=" << milliseconds(p.optimizer_s)
      << "\n# overhead_ms=" << milliseconds(p.overhead_s) << "\nlayer,params,forward_ms,backward_ms\n";
  for (const MeasuredLayer& l : p.layers) {
    out << l.name << ',' << static_cast<long long>(l.params) << ',' << milliseconds(l.forward_s) << ','
        << milliseconds(l.backward_s) << '\n';
  }
}

MeasuredProfile load_profile_file(const std::string& path) {
  if (const std::string problem = input_file_problem(path); !problem.empty()) throw ScenarioError(problem);
  const std::string_view name(path);
  if (name.ends_with(".json")) return read_profile_trace(read_json_file(path), path);
  if (name.ends_with(".csv")) {
    std::ifstream in(path);
    if (!in) throw ScenarioError(path + ": cannot read the file");
    return read_profile_csv(in, path);
  }
  throw ScenarioError(path +
                      ": expected a .json trace (torch.profiler's export_chrome_trace) or a .csv of layer times");
}

}  // namespace dtsim
