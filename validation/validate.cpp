#include "validation/validate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "algorithms/parameter_server.hpp"
#include "algorithms/registry.hpp"
#include "algorithms/schedule.hpp"
#include "calibrate/fit.hpp"
#include "calibrate/microbench.hpp"
#include "scenarios/units.hpp"
#include "sim/executor.hpp"
#include "sim/simgrid_executor.hpp"
#include "validation/json_fields.hpp"

namespace dtsim {

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(at));
  const auto hi = static_cast<std::size_t>(std::ceil(at));
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

namespace {

struct RawRun {
  std::vector<Sample> pingpong;          // ranks 0 and 1 alone
  std::vector<Sample> pingpong_all;      // every rank at once, in pairs (emulated-run.sh)
  std::vector<Sample> exchange;          // every rank at once, in pairs, both ways at the same time
  std::vector<Sample> exchange_slowest;  // the same, the slowest rank of each exchange
  std::vector<Sample> msgrate;           // ranks 0 and 1: COUNT small messages at once, and how long they took
  struct SendTime {
    double bytes, complete_s, done_s;
  };
  std::vector<SendTime> sendtime;   // ranks 0 and 1: when a send was complete, and when it had arrived
  std::vector<TwoSends> two_sends;  // measured times only
  struct Case {
    std::string algorithm;
    std::uint64_t bytes;
    double median_s;
    bool ok;
  };
  std::vector<Case> cases;
};

// Reads the line-oriented output of emulated-run.sh (or dtsim-nccl-run): each known line's fields must all be
// there, finite, sizes whole and not negative, times positive; anything else is an error naming `source` and the line.
// Lines of other kinds (the scripts' notes) are skipped.
RawRun parse_raw(std::istream& in, const std::string& source) {
  RawRun raw;
  std::string line;
  int line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    std::istringstream fields(line);
    std::string kind;
    if (!(fields >> kind)) continue;
    const auto fail = [&](const std::string& expected) {
      throw std::invalid_argument(source + " line " + std::to_string(line_number) + ": a \"" + kind +
                                  "\" line: expected " + expected);
    };
    const auto finite = [](double v) { return std::isfinite(v); };
    const auto whole = [](double v) { return std::isfinite(v) && v >= 0 && v <= 1e15 && v == std::floor(v); };
    const auto at_end = [&fields] {
      std::string extra;
      return !(fields >> extra);
    };
    std::vector<Sample>* samples = kind == "pingpong"           ? &raw.pingpong
                                   : kind == "pingpong_all"     ? &raw.pingpong_all
                                   : kind == "exchange"         ? &raw.exchange
                                   : kind == "exchange_slowest" ? &raw.exchange_slowest
                                   : kind == "msgrate"          ? &raw.msgrate
                                                                : nullptr;
    if (samples != nullptr) {
      Sample s;
      if (!(fields >> s.x >> s.y) || !at_end() || !whole(s.x) || !finite(s.y) || s.y <= 0 || s.y > max_duration_s)
        fail(std::string(kind == "msgrate" ? "COUNT" : "BYTES") + " (a whole number) and SECONDS (in (0, 1e9])");
      samples->push_back(s);
    } else if (kind == "sendtime") {
      RawRun::SendTime t{};
      if (!(fields >> t.bytes >> t.complete_s >> t.done_s) || !at_end() || !whole(t.bytes) || !finite(t.complete_s) ||
          !finite(t.done_s) || t.complete_s < 0 || t.done_s <= 0)
        fail("BYTES (a whole number), COMPLETE_S (0 or more) and DONE_S (positive)");
      raw.sendtime.push_back(t);
    } else if (kind == "twosends") {
      TwoSends t;
      double bytes = 0, complete_first = 0, complete_second = 0;
      if (!(fields >> bytes >> complete_first >> complete_second >> t.measured_first_s >> t.measured_second_s) ||
          !at_end() || !whole(bytes) || bytes < 4 || !finite(complete_first) || !finite(complete_second) ||
          !finite(t.measured_first_s) || !finite(t.measured_second_s) || t.measured_first_s <= 0 ||
          t.measured_second_s <= 0)
        fail("BYTES (4 or more) and four times in seconds, the last two positive");
      t.bytes = bytes;
      raw.two_sends.push_back(t);
    } else if (kind == "case") {
      RawRun::Case c;
      double bytes = 0, min_s = 0;
      std::string ok;
      if (!(fields >> c.algorithm >> bytes >> c.median_s >> min_s >> ok) || !at_end() || !whole(bytes) ||
          !finite(c.median_s) || !finite(min_s) || c.median_s <= 0 || min_s <= 0 || c.median_s > max_duration_s ||
          min_s > c.median_s || (ok != "ok" && ok != "WRONG"))
        fail(
            "ALGORITHM BYTES MEDIAN_S MIN_S ok|WRONG (BYTES a whole number, the times positive, up to 1e9 s, the "
            "fastest repetition MIN_S no slower than the median)");
      c.bytes = static_cast<std::uint64_t>(bytes);
      c.ok = ok == "ok";
      raw.cases.push_back(c);
    }
  }
  return raw;
}

RawRun run_emulated(const ValidationPlan& plan, int ranks, double rate_Mbps) {
  const std::string out =
      (std::filesystem::temp_directory_path() / ("dtsim-validate-" + std::to_string(::getpid()) + ".txt")).string();
  std::ostringstream command;
  command << "bash " << plan.script << ' ' << plan.bin_dir << ' ' << ranks << ' ' << static_cast<long>(rate_Mbps) << ' '
          << plan.repetitions << ' ' << out << " \"";
  for (std::size_t i = 0; i < plan.algorithms.size(); ++i)
    command << (i ? " " : "") << plan.algorithms[i];
  command << '"';
  for (std::uint64_t s : plan.sizes)
    command << ' ' << s;
  command << " > " << out << ".log 2>&1";
  const int status = std::system(command.str().c_str());
  std::ifstream in(out);
  RawRun raw;
  std::string parse_error;
  try {
    raw = parse_raw(in, "the emulated run's output");
  } catch (const std::invalid_argument& e) {
    parse_error = std::string(e.what()) + "; ";
  }
  std::string log;
  {
    std::ifstream l(out + ".log");
    std::getline(l, log, '\0');
  }
  std::filesystem::remove(out);
  std::filesystem::remove(out + ".log");
  if (status != 0 || !parse_error.empty() || raw.cases.size() != plan.algorithms.size() * plan.sizes.size()) {
    throw std::runtime_error("emulated cluster run (" + std::to_string(ranks) + " ranks, " +
                             std::to_string(static_cast<long>(rate_Mbps)) + " Mbit/s) failed: " + parse_error +
                             log.substr(0, std::min<std::size_t>(log.size(), 600)));
  }
  return raw;
}

void summarize(ValidationResult& result) {
  std::vector<double> errors, all;
  for (const ValidationCase& c : result.cases) {
    if (c.bytes >= 1048576) errors.push_back(std::fabs(c.error()));
    all.push_back(std::fabs(c.error()));
  }
  result.median_abs_error = percentile(errors, 0.5);
  result.p90_abs_error = percentile(errors, 0.9);
  result.all_median_abs_error = percentile(all, 0.5);
  result.all_p90_abs_error = percentile(all, 0.9);
}

// What a network's fits and microbenchmarks give the SimGrid executor.
struct TransportModel {
  AlphaBetaGamma cost;
  bool tcp = false;
  double send_buffer_bytes = 0;
  int older_send_weight = 1;
};

SimGridOptions case_options(bool library, const TransportModel& m) {
  SimGridOptions sg;
  sg.cost = m.cost;
  sg.ack_crosstraffic = m.tcp;
  const bool dtsim_over_tcp = m.tcp && !library;
  sg.eager = m.tcp && library;
  sg.ready_handshake = dtsim_over_tcp;
  if (dtsim_over_tcp) {
    sg.send_buffer_bytes = static_cast<std::uint64_t>(std::llround(m.send_buffer_bytes));
    sg.older_send_weight = m.older_send_weight;
  }
  return sg;
}

// One case on the SimGrid star. Over TCP (OpenMPI): acknowledgements load the reverse direction of every link. A
// dtsim schedule runs with dtsim-mpi-run's receiver-ready protocol (an empty "ready" message, then the data sent
// eagerly into the posted receive), each send complete while its last send_buffer_bytes are still in TCP's buffers,
// which keep older_send_weight times the share of what the rank writes in a later step; OpenMPI's own allreduce sends
// every message eagerly (the eager limits are raised to 128 MiB), before its receive is posted.
// The libraries' own allreduce is pinned to (OpenMPI) or mostly is (NCCL) a ring.
bool library_case(const std::string& algorithm_name) { return algorithm_name == "mpi" || algorithm_name == "nccl"; }

// The schedule a case ran (its algorithm's, over floats).
Schedule case_schedule(const std::string& algorithm_name, int ranks, std::uint64_t bytes) {
  AlgorithmOptions options;
  options.element_bytes = 4;
  options.set(ps_placement_option.name, "colocated");
  const std::string algorithm = library_case(algorithm_name) ? "ring" : algorithm_name;
  return find_qualified_algorithm(algorithm).build(ranks, bytes / 4 * 4, options);
}

double predict_case(const std::string& algorithm_name, int ranks, std::uint64_t bytes, const TransportModel& m) {
  return run_simgrid(case_schedule(algorithm_name, ranks, bytes), case_options(library_case(algorithm_name), m)).time_s;
}

// dtsim-mpi-pingpong twosends as a schedule: rank 0 sends `bytes` to rank 1, then (a step later) to rank 2, with
// dtsim-mpi-run's protocol. The measurement times each arrival by an empty "done" message back to rank 0, after it
// had both "ready" messages; the simulation's clock starts before the "ready" messages: one latency each, which
// cancel.
void predict_two_sends(TwoSends& t, const TransportModel& m) {
  const auto bytes = static_cast<std::uint64_t>(t.bytes);
  ScheduleBuilder b(Collective::broadcast, "two sends", 3, bytes, split_even(bytes, 1, 1));
  b.set_root(0);
  b.begin_rank(0);
  b.begin_step();
  b.add(Op::send(1, 0));
  b.begin_step();
  b.add(Op::send(2, 0));
  for (int r = 1; r <= 2; ++r) {
    b.begin_rank(r);
    b.begin_step();
    b.add(Op::recv_copy(0, 0));
  }
  const ExecutionResult e = run_simgrid(b.finish(), case_options(false, m));
  t.predicted_first_s = e.rank_finish_s[1];
  t.predicted_second_s = e.rank_finish_s[2];
}

// The network's older send weight, fitted to the two-sends microbenchmark only: of 1 to 4, the one whose predicted
// first arrivals are closest to the measured ones (least sum of squared relative errors; the lower on a tie). Each
// network's two_sends are then predicted with it.
void fit_older_send_weight(TransportModel& m, std::vector<TwoSends>& two_sends) {
  // without a send buffer (not over TCP) every weight predicts the same
  const int most = two_sends.empty() || !m.tcp || m.send_buffer_bytes <= 0 ? 1 : 4;
  double best = std::numeric_limits<double>::infinity();
  int best_weight = 1;
  for (int weight = 1; most > 1 && weight <= most; ++weight) {
    m.older_send_weight = weight;
    double sum = 0;
    for (TwoSends& t : two_sends) {
      predict_two_sends(t, m);
      const double e = (t.predicted_first_s - t.measured_first_s) / t.measured_first_s;
      sum += e * e;
    }
    if (sum < best) {
      best = sum;
      best_weight = weight;
    }
  }
  m.older_send_weight = best_weight;
  for (TwoSends& t : two_sends)
    predict_two_sends(t, m);
}

constexpr const char* all_ranks_text = "all ranks in pairs at once";

struct PingPongFit {
  double alpha_s = 0;
  double bandwidth_Bps = 0;
  double r_squared = 0;
};

// alpha: the median one-way time of messages up to 1 KB (pure latency: larger ones already take several microseconds
// of wire time at 100 Mbit/s, and these sizes do not change the time measurably); beta: the slope from 1 MB (a tbf
// bucket passes its burst at once: the line's intercept is about -burst/rate, only its slope is beta).
PingPongFit fit_pingpong(const std::vector<Sample>& samples, const std::string& what) {
  std::vector<Sample> small;
  std::vector<Sample> large;
  for (const Sample& s : samples)
    (s.x <= 1024 ? small : large).push_back(s);
  std::erase_if(large, [](const Sample& s) { return s.x < 1048576; });
  if (small.size() < 3) {
    throw FitError(what + " up to 1 KB: needs at least 3 sizes, got " + std::to_string(small.size()));
  }
  std::vector<double> small_times;
  for (const Sample& s : small)
    small_times.push_back(s.y);
  const LinearFit bandwidth = fit_line(large, what + " from 1 MB", true);
  return {percentile(small_times, 0.5), 1.0 / bandwidth.slope, bandwidth.r_squared};
}

// Fits alpha and beta from the ping-pong lines and predicts every case line on SimGrid. alpha is from ranks 0 and 1
// alone. Where the run has a ping-pong of all ranks at once (they share this machine's cores), beta is from that one:
// the bandwidth a rank gets while the others move data too. Its alpha is reported only: waiting for a core adds
// tens to hundreds of microseconds that vary from run to run (27 to 343 us at 4 ranks and 1 Gbit/s).
void predict_raw(const RawRun& raw, int ranks, double rate_bps, double reduce_Bps, bool tcp, ValidationResult& result,
                 const std::function<void(const std::string&)>& progress) {
  const PingPongFit two = fit_pingpong(raw.pingpong, "ping-pong");
  const bool all = !raw.pingpong_all.empty();
  const PingPongFit loaded = all ? fit_pingpong(raw.pingpong_all, "ping-pong of all ranks") : two;
  ValidationNetwork net;
  net.ranks = ranks;
  net.rate_bps = rate_bps;
  net.cost.alpha_s = two.alpha_s;
  net.cost.bandwidth_Bps = loaded.bandwidth_Bps;
  net.cost.reduce_Bps = reduce_Bps;
  net.beta_r_squared = loaded.r_squared;
  net.bandwidth_all_ranks = all;
  net.all_ranks_alpha_s = all ? loaded.alpha_s : 0.0;
  net.two_rank_bandwidth_Bps = two.bandwidth_Bps;
  net.cost.gap_s = fit_message_gap(raw.msgrate);
  if (!(net.cost.bandwidth_Bps >= min_bandwidth_Bps && net.cost.bandwidth_Bps <= max_bandwidth_Bps) ||
      !(net.cost.alpha_s >= 0 && net.cost.alpha_s <= max_duration_s) ||
      !(net.cost.gap_s >= 0 && net.cost.gap_s <= max_duration_s)) {
    std::ostringstream text;
    text << "the ping-pong lines fit no network: a bandwidth of " << net.cost.bandwidth_Bps
         << " B/s (accepted: " << min_bandwidth_Bps << " to " << max_bandwidth_Bps << "), a latency of "
         << net.cost.alpha_s << " s and a gap of " << net.cost.gap_s << " s (accepted: 0 to " << max_duration_s
         << "); check the \"pingpong\" and \"msgrate\" lines";
    throw std::invalid_argument(text.str());
  }
  for (const Sample& m : raw.msgrate)
    net.message_rate.emplace_back(m.x, m.y);
  if (!raw.exchange.empty()) net.exchange_bandwidth_Bps = fit_pingpong(raw.exchange, "exchange").bandwidth_Bps;
  if (!raw.exchange_slowest.empty()) {
    net.exchange_slowest_Bps = fit_pingpong(raw.exchange_slowest, "slowest exchange").bandwidth_Bps;
  }
  if (!raw.sendtime.empty()) {  // a send is complete (1 - complete / done) x bytes before it has arrived
    std::vector<double> held;
    for (const RawRun::SendTime& t : raw.sendtime) {
      if (t.done_s > 0) held.push_back(std::max(0.0, t.bytes * (1 - t.complete_s / t.done_s)));
    }
    net.send_buffer_bytes = percentile(held, 0.5);
  }
  TransportModel model{net.cost, tcp, net.send_buffer_bytes};
  net.two_sends = raw.two_sends;
  fit_older_send_weight(model, net.two_sends);
  net.older_send_weight = model.older_send_weight;
  result.networks.push_back(net);
  progress(std::to_string(ranks) + " ranks: SimGrid predictions");
  for (const RawRun::Case& c : raw.cases) {
    ValidationCase v;
    v.ranks = ranks;
    v.rate_bps = net.rate_bps;
    v.algorithm = c.algorithm;
    v.bytes = c.bytes;
    v.measured_s = c.median_s;
    v.predicted_s = predict_case(c.algorithm, ranks, c.bytes, model);
    v.result_ok = c.ok;
    result.cases.push_back(v);
  }
}

}  // namespace

AlphaBetaGamma fit_emulated_network(std::istream& run_output) {
  const RawRun raw = parse_raw(run_output, "the emulated run's output");
  const PingPongFit two = fit_pingpong(raw.pingpong, "ping-pong");
  const bool all = !raw.pingpong_all.empty();
  AlphaBetaGamma cost;
  cost.alpha_s = two.alpha_s;
  cost.bandwidth_Bps = all ? fit_pingpong(raw.pingpong_all, "ping-pong of all ranks").bandwidth_Bps : two.bandwidth_Bps;
  cost.gap_s = fit_message_gap(raw.msgrate);
  return cost;
}

ValidationResult validate_measured(const std::string& path, int ranks, const std::string& label) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot read the file");
  const RawRun raw = parse_raw(in, path);
  if (raw.cases.empty() || raw.pingpong.size() < 6) {
    throw std::invalid_argument(path + ": expected \"pingpong BYTES SECONDS\" lines (6 or more) and \"case\" lines");
  }
  double seconds = 0;  // SimGrid's time for every case, estimated before any runs
  for (const RawRun::Case& c : raw.cases) {
    try {
      seconds += estimated_simgrid_seconds(case_schedule(c.algorithm, ranks, c.bytes));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(path + ": case " + c.algorithm + " " + std::to_string(c.bytes) + ": " + e.what());
    }
  }
  if (seconds > simgrid_time_limit_s) {
    char text[160];
    std::snprintf(text, sizeof text, "predicting its %zu case%s on %d ranks on SimGrid would take about %.0f s",
                  raw.cases.size(), raw.cases.size() == 1 ? "" : "s", ranks, seconds);
    throw std::invalid_argument(path + ": " + text + " (2.5 us a message), above the " +
                                std::to_string(static_cast<int>(simgrid_time_limit_s)) +
                                " s limit: split the cases over several files, or measure fewer ranks");
  }
  ValidationResult result;
  try {
    predict_raw(raw, ranks, 0, 1e12, false, result, [](const std::string&) {});
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  result.label = label;
  summarize(result);
  return result;
}

ValidationResult repredict(const nlohmann::json& previous) {
  ValidationResult result;
  try {
    check_keys(previous, "", {"command", "repetitions", "networks", "cases", "summary", "summary_all_sizes"});
    field_count(previous, "", "repetitions");  // (only reported: the measurements' medians are over that many)
    if (!previous.contains("networks") || !previous.at("networks").is_array()) {
      throw std::invalid_argument("networks: expected the list of networks the cases ran on");
    }
    const nlohmann::json& networks = previous.at("networks");
    for (std::size_t i = 0; i < networks.size(); ++i) {
      const nlohmann::json& n = networks[i];
      const std::string at = "networks[" + std::to_string(i) + "].";
      check_keys(
          n, at,
          {"ranks", "rate_bps", "alpha_s", "bandwidth_Bps", "reduce_Bps", "gap_s", "message_rate", "beta_r_squared",
           "alpha_from", "bandwidth_from", "all_ranks_alpha_s", "two_rank_bandwidth_Bps", "exchange_bandwidth_Bps",
           "exchange_slowest_Bps", "send_buffer_bytes", "two_sends", "older_send_weight"});
      ValidationNetwork net;
      net.ranks = field_count(n, at, "ranks");
      net.rate_bps = field_number(n, at, "rate_bps", 0, 8 * max_bandwidth_Bps);
      net.cost.alpha_s = field_number(n, at, "alpha_s", 0, max_duration_s);
      net.cost.bandwidth_Bps = field_number(n, at, "bandwidth_Bps", min_bandwidth_Bps, max_bandwidth_Bps);
      net.cost.reduce_Bps = field_number(n, at, "reduce_Bps", min_bandwidth_Bps, max_bandwidth_Bps);
      // the fields below are absent from runs made before their microbenchmark existed: 0, not measured
      net.cost.gap_s = optional_number(n, at, "gap_s", 0, max_duration_s, 0);
      if (n.contains("message_rate")) {
        const nlohmann::json& rates = n.at("message_rate");
        for (std::size_t k = 0; rates.is_array() && k < rates.size(); ++k) {
          const nlohmann::json& pair = rates[k];
          if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number() || !pair[1].is_number() ||
              !(pair[0].get<double>() >= 1) || !(pair[1].get<double>() > 0) ||
              !(pair[1].get<double>() <= max_duration_s)) {
            throw std::invalid_argument(at + "message_rate[" + std::to_string(k) +
                                        "]: expected [messages >= 1, seconds > 0], got " + pair.dump());
          }
          net.message_rate.emplace_back(pair[0].get<double>(), pair[1].get<double>());
        }
        if (!rates.is_array()) throw std::invalid_argument(at + "message_rate: expected a list of [messages, seconds]");
      }
      net.beta_r_squared = field_number(n, at, "beta_r_squared", -1e300, 1);
      net.bandwidth_all_ranks = n.value("bandwidth_from", std::string()) == all_ranks_text;
      net.all_ranks_alpha_s = optional_number(n, at, "all_ranks_alpha_s", 0, max_duration_s, 0);
      net.two_rank_bandwidth_Bps = optional_number(n, at, "two_rank_bandwidth_Bps", 0, max_bandwidth_Bps, 0);
      net.exchange_bandwidth_Bps = optional_number(n, at, "exchange_bandwidth_Bps", 0, max_bandwidth_Bps, 0);
      net.exchange_slowest_Bps = optional_number(n, at, "exchange_slowest_Bps", 0, max_bandwidth_Bps, 0);
      net.send_buffer_bytes = optional_number(n, at, "send_buffer_bytes", 0, 1e12, 0);
      const nlohmann::json two_sends = n.value("two_sends", nlohmann::json::array());
      for (std::size_t k = 0; k < two_sends.size(); ++k) {
        const nlohmann::json& m = two_sends[k];
        const std::string in = at + "two_sends[" + std::to_string(k) + "].";
        check_keys(m, in,
                   {"bytes", "measured_first_s", "measured_second_s", "predicted_first_s", "predicted_second_s"});
        TwoSends t;
        t.bytes = field_number(m, in, "bytes", 1, 1e12);
        t.measured_first_s = field_number(m, in, "measured_first_s", 0, max_duration_s);
        t.measured_second_s = field_number(m, in, "measured_second_s", 0, max_duration_s);
        net.two_sends.push_back(t);
      }
      TransportModel model{net.cost, net.rate_bps > 0, net.send_buffer_bytes};
      fit_older_send_weight(model, net.two_sends);
      net.older_send_weight = model.older_send_weight;
      result.networks.push_back(net);
    }
    const nlohmann::json& cases = previous.at("cases");
    if (!cases.is_array() || cases.empty()) throw std::invalid_argument("cases: expected a non-empty list of cases");
    std::vector<const ValidationNetwork*> case_network;  // by case: the network it ran on
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const nlohmann::json& c = cases[i];
      const std::string at = "cases[" + std::to_string(i) + "].";
      check_keys(c, at, {"ranks", "rate_bps", "algorithm", "bytes", "measured_s", "predicted_s", "error", "result_ok"});
      ValidationCase v;
      v.ranks = field_count(c, at, "ranks");
      v.rate_bps = field_number(c, at, "rate_bps", 0, 8 * max_bandwidth_Bps);
      v.algorithm = field_text(c, at, "algorithm");
      if (!c.contains("bytes") || !c.at("bytes").is_number_unsigned()) {
        throw std::invalid_argument(at + "bytes: expected a whole number of bytes >= 0, got " +
                                    (c.contains("bytes") ? c.at("bytes").dump() : std::string("nothing")));
      }
      v.bytes = c.at("bytes").get<std::uint64_t>();
      if (!c.contains("measured_s") || !c.at("measured_s").is_number() || !(c.at("measured_s").get<double>() > 0) ||
          !(c.at("measured_s").get<double>() <= max_duration_s)) {
        throw std::invalid_argument(at + "measured_s: expected a time > 0 s, got " +
                                    (c.contains("measured_s") ? c.at("measured_s").dump() : std::string("nothing")));
      }
      v.measured_s = c.at("measured_s").get<double>();
      if (!c.contains("result_ok") || !c.at("result_ok").is_boolean()) {
        throw std::invalid_argument(at + "result_ok: expected true or false");
      }
      v.result_ok = c.at("result_ok").get<bool>();
      const auto net = std::find_if(result.networks.begin(), result.networks.end(), [&](const ValidationNetwork& n) {
        return n.ranks == v.ranks && n.rate_bps == v.rate_bps;
      });
      if (net == result.networks.end()) {
        std::ostringstream text;
        text << at << "ranks, rate_bps: no entry of networks has " << v.ranks << " ranks at " << v.rate_bps
             << " bit/s (each case runs on one of them)";
        throw std::invalid_argument(text.str());
      }
      result.cases.push_back(v);
      case_network.push_back(&*net);
    }
    for (std::size_t i = 0; i < result.cases.size(); ++i) {  // (the whole file read: a bad field is named first)
      ValidationCase& v = result.cases[i];
      const ValidationNetwork* net = case_network[i];
      const TransportModel model{net->cost, v.rate_bps > 0, net->send_buffer_bytes, net->older_send_weight};
      try {
        v.predicted_s = predict_case(v.algorithm, v.ranks, v.bytes, model);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument("cases[" + std::to_string(i) + "].algorithm: " + e.what());
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("not a validation.json: ") + e.what());
  }
  summarize(result);
  return result;
}

ValidationResult run_validation(const ValidationPlan& plan, const std::function<void(const std::string&)>& progress) {
  ValidationResult result;
  // the ranks share this machine's cores: a reduction runs at the measured rate divided by the ranks per core
  const double reduce_Bps = measure_reduce_Bps(std::size_t{1} << 22, 0.3);
  const double cores = std::max(1U, std::thread::hardware_concurrency());
  for (int ranks : plan.ranks) {
    for (double rate : plan.rates_Mbps) {
      progress(std::to_string(ranks) + " ranks at " + std::to_string(static_cast<long>(rate)) +
               " Mbit/s: real MPI runs in network namespaces");
      const RawRun raw = run_emulated(plan, ranks, rate);
      predict_raw(raw, ranks, rate * 1e6, reduce_Bps / std::max(1.0, ranks / cores), true, result, progress);
    }
  }
  summarize(result);
  return result;
}

nlohmann::json validation_json(const ValidationPlan& plan, const ValidationResult& r, const std::string& command) {
  nlohmann::json cases = nlohmann::json::array();
  for (const ValidationCase& c : r.cases) {
    cases.push_back({{"ranks", c.ranks},
                     {"rate_bps", c.rate_bps},
                     {"algorithm", c.algorithm},
                     {"bytes", c.bytes},
                     {"measured_s", c.measured_s},
                     {"predicted_s", c.predicted_s},
                     {"error", c.error()},
                     {"result_ok", c.result_ok}});
  }
  nlohmann::json networks = nlohmann::json::array();
  for (const ValidationNetwork& n : r.networks) {
    nlohmann::json two_sends = nlohmann::json::array();
    for (const TwoSends& t : n.two_sends) {
      two_sends.push_back({{"bytes", t.bytes},
                           {"measured_first_s", t.measured_first_s},
                           {"measured_second_s", t.measured_second_s},
                           {"predicted_first_s", t.predicted_first_s},
                           {"predicted_second_s", t.predicted_second_s}});
    }
    networks.push_back({{"ranks", n.ranks},
                        {"rate_bps", n.rate_bps},
                        {"alpha_s", n.cost.alpha_s},
                        {"bandwidth_Bps", n.cost.bandwidth_Bps},
                        {"reduce_Bps", n.cost.reduce_Bps},
                        {"gap_s", n.cost.gap_s},
                        {"message_rate", n.message_rate},
                        {"beta_r_squared", n.beta_r_squared},
                        {"alpha_from", "ranks 0 and 1"},
                        {"bandwidth_from", n.bandwidth_all_ranks ? all_ranks_text : "ranks 0 and 1"},
                        {"all_ranks_alpha_s", n.all_ranks_alpha_s},
                        {"two_rank_bandwidth_Bps", n.two_rank_bandwidth_Bps},
                        {"exchange_bandwidth_Bps", n.exchange_bandwidth_Bps},
                        {"exchange_slowest_Bps", n.exchange_slowest_Bps},
                        {"send_buffer_bytes", n.send_buffer_bytes},
                        {"two_sends", two_sends},
                        {"older_send_weight", n.older_send_weight}});
  }
  return {
      {"command", command},
      {"repetitions", plan.repetitions},
      {"networks", networks},
      {"cases", cases},
      {"summary", {{"sizes", ">= 1 MB"}, {"median_abs_error", r.median_abs_error}, {"p90_abs_error", r.p90_abs_error}}},
      {"summary_all_sizes",
       {{"sizes", "all"}, {"median_abs_error", r.all_median_abs_error}, {"p90_abs_error", r.all_p90_abs_error}}}};
}

std::string error_summary(const ValidationResult& r) {
  char line[160];
  std::snprintf(
      line, sizeof line, "all sizes: median |error| %.1f%%, p90 %.1f%%; sizes >= 1 MB: median %.1f%%, p90 %.1f%%",
      100 * r.all_median_abs_error, 100 * r.all_p90_abs_error, 100 * r.median_abs_error, 100 * r.p90_abs_error);
  return line;
}

std::string validation_markdown(const ValidationPlan& plan, const ValidationResult& r, const std::string& command) {
  std::ostringstream out;
  char line[512];
  out << "# Validation: real runs against dtsim's predictions" << (r.label.empty() ? "" : " (" + r.label + ")")
      << "\n\n"
      << "Produced by `" << command << "` (median of " << plan.repetitions
      << " repetitions per case). Each network's alpha and beta come from an MPI ping-pong on it only: alpha from\n"
      << "ranks 0 and 1 alone, beta from all its ranks at once in pairs (they share this machine's cores); every case "
         "is\n"
      << "predicted by the SimGrid executor with the same schedule the MPI executor ran (`mpi`: OpenMPI's own\n"
      << "MPI_Allreduce, pinned to its ring). Error = (predicted - measured) / measured.\n\n";
  std::snprintf(line, sizeof line,
                "**All sizes: median |error| %.1f%%, 90th percentile %.1f%%.** Sizes >= 1 MB: median %.1f%%, 90th "
                "percentile %.1f%%.\n\n",
                100 * r.all_median_abs_error, 100 * r.all_p90_abs_error, 100 * r.median_abs_error,
                100 * r.p90_abs_error);
  out << line
      << "| ranks | rate | alpha (ranks 0 and 1) | bandwidth (all ranks at once) | beta R^2 | reduce rate used | "
         "all ranks at once: alpha; ranks 0 and 1: bandwidth | each of N streams, both ways in pairs: median, "
         "slowest | still buffered when a send is complete |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const ValidationNetwork& n : r.networks) {
    char exchange[48] = "not run";
    if (n.exchange_bandwidth_Bps > 0) {
      std::snprintf(exchange, sizeof exchange, "%.2f, %.2f MB/s", n.exchange_bandwidth_Bps / 1e6,
                    n.exchange_slowest_Bps / 1e6);
    }
    char buffered[32] = "not measured";
    if (n.send_buffer_bytes > 0) std::snprintf(buffered, sizeof buffered, "%.0f KB", n.send_buffer_bytes / 1e3);
    std::snprintf(line, sizeof line,
                  "| %d | %.0f Mbit/s | %.1f us | %.2f MB/s | %.4f | %.2f GB/s | %.1f us, %.2f MB/s | %s | %s |\n",
                  n.ranks, n.rate_bps / 1e6, n.cost.alpha_s * 1e6, n.cost.bandwidth_Bps / 1e6, n.beta_r_squared,
                  n.cost.reduce_Bps / 1e9, n.all_ranks_alpha_s * 1e6, n.two_rank_bandwidth_Bps / 1e6, exchange,
                  buffered);
    out << line;
  }
  out << "\nPer-message gap g (`dtsim-mpi-pingpong msgrate`: the slope of the time of 16 and 64 small messages sent at "
         "once):";
  for (const ValidationNetwork& n : r.networks) {
    std::snprintf(
        line, sizeof line, " %d ranks at %.0f Mbit/s %s;", n.ranks, n.rate_bps / 1e6,
        n.cost.gap_s > 0 ? (std::to_string(n.cost.gap_s * 1e6).substr(0, 5) + " us").c_str() : "not measured");
    out << line;
  }
  out << "\n";
  bool two_sends = false;
  for (const ValidationNetwork& n : r.networks)
    two_sends = two_sends || !n.two_sends.empty();
  if (two_sends) {
    out << "\nThe transport alone: rank 0 sends a message to rank 1, then one to rank 2 (`dtsim-mpi-pingpong "
           "twosends`);\nwhen each had arrived, measured and predicted with the fits above. Fair sharing of rank 0's "
           "link\nmakes both arrive together when both were buffered at once; with an older send weight w the first "
           "keeps\nw times the second's share while both are on their way. w is fitted to these first arrivals only "
           "(the whole\nnumber from 1 to 4 closest to them) and used for every case of the network.\n\n"
           "| ranks | rate | w | bytes | first: measured | predicted | error | second: measured | predicted | error "
           "|\n"
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const ValidationNetwork& n : r.networks) {
      for (const TwoSends& t : n.two_sends) {
        std::snprintf(line, sizeof line,
                      "| %d | %.0f Mbit/s | %d | %.0f | %.3f ms | %.3f ms | %+.1f%% | %.3f ms | %.3f ms | %+.1f%% |\n",
                      n.ranks, n.rate_bps / 1e6, n.older_send_weight, t.bytes, t.measured_first_s * 1e3,
                      t.predicted_first_s * 1e3, 100 * (t.predicted_first_s - t.measured_first_s) / t.measured_first_s,
                      t.measured_second_s * 1e3, t.predicted_second_s * 1e3,
                      100 * (t.predicted_second_s - t.measured_second_s) / t.measured_second_s);
        out << line;
      }
    }
  }
  out << "\n| ranks | rate | algorithm | bytes | measured | predicted | error | result |\n"
         "|---:|---:|---|---:|---:|---:|---:|---|\n";
  for (const ValidationCase& c : r.cases) {
    std::snprintf(line, sizeof line, "| %d | %.0f Mbit/s | %s | %llu | %.3f ms | %.3f ms | %+.1f%% | %s |\n", c.ranks,
                  c.rate_bps / 1e6, c.algorithm.c_str(), static_cast<unsigned long long>(c.bytes), c.measured_s * 1e3,
                  c.predicted_s * 1e3, 100 * c.error(), c.result_ok ? "exact" : "WRONG");
    out << line;
  }
  return out.str();
}

}  // namespace dtsim
