#include "sim/analytical_executor.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <unordered_map>

#include "algorithms/step_walker.hpp"
#include "sim/library_cost.hpp"

namespace dtsim {
namespace {

class ClockHandler {
public:
  ClockHandler(const Schedule& s, const AnalyticalOptions& o)
      : s_(s),
        o_(o),
        library_(segment_library_cost(o, s)),
        clock_(static_cast<std::size_t>(s.ranks), library_.start_s),
        step_end_(static_cast<std::size_t>(s.ranks), library_.start_s) {
    if (!o.topology->paths_are_cheap()) route_pairs();
    has_gaps_ = has_message_gaps(*o.topology);
  }

  std::uint32_t on_send_posted(std::size_t, const Op& send) {
    ++messages_;
    bytes_sent_ += s_.span_bytes(send.span());
    return 0;
  }

  void on_matched(std::size_t src, std::size_t dst, std::uint32_t, const Op& send, const Op&) {
    // Both sides have posted their current steps, so their clocks hold the post times.
    const auto bytes = static_cast<double>(s_.span_bytes(send.span()));
    const FactorRange f = factors_for(o_.factors, bytes);
    const LinkSpec route = path(src, dst);
    const double latency_s = route.latency_s;
    double rate_Bps = route.bandwidth_Bps * f.bandwidth_factor;
    const auto hop =
        library_.active ? static_cast<std::size_t>(hop_class(o_, static_cast<int>(src), static_cast<int>(dst))) : 0;
    if (library_.active) {  // the protocol's share of the wire, at most its cap
      rate_Bps /= library_.wire_factor[hop];
      if (library_.rate_cap_Bps > 0) rate_Bps = std::min(rate_Bps, library_.rate_cap_Bps);
    }
    const double transfer_s = latency_s * f.latency_factor + bytes / rate_Bps;
    if (library_.active) {  // eager: it moved when sent, and its receiver sees it a hop's latency after it lands
      const double end = clock_[src] + transfer_s;
      record(src, dst, send, clock_[src], end);
      step_end_[src] = std::max(step_end_[src], end);
      step_end_[dst] = std::max(step_end_[dst], end + library_.hop_latency_s[hop]);
      return;
    }
    const double end = std::max(clock_[src], clock_[dst]) + transfer_s;
    record(src, dst, send, end - transfer_s, end);
    step_end_[src] = std::max(step_end_[src], end);
    step_end_[dst] = std::max(step_end_[dst], end);
  }

  void on_step_done(std::size_t r, std::span<const Op> step) {
    double compute_s = 0.0;
    std::uint64_t reduce_bytes = 0;
    StepGaps gaps;
    for (const Op& op : step) {
      if (op.kind() == OpKind::compute) compute_s += s_.compute_flops[op.compute_index()] / o_.compute_flops_per_s;
      if (op.kind() == OpKind::recv_reduce) reduce_bytes += s_.span_bytes(op.span());

      if (!has_gaps_ || op.kind() == OpKind::compute) continue;
      const auto peer = static_cast<std::size_t>(op.peer());
      if (op.kind() == OpKind::send) {
        gaps.add_send(path(r, peer).message_gap_s);
      } else {
        gaps.add_recv(path(peer, r).message_gap_s);
      }
    }
    double busy_s = std::max(compute_s, gaps.seconds());  // computing and injecting run side by side
    // (a switch endpoint, NVLS's engine, reduces at its own rate: position_reduce_Bps)
    const double reduce_s = static_cast<double>(reduce_bytes) / position_reduce_Bps(o_, static_cast<int>(r));
    if (library_.active) {  // a library reduces as the data arrives (fused): beside the transfers, not after
      busy_s = std::max(busy_s, reduce_s);
    }
    const double end = std::max(step_end_[r], clock_[r] + busy_s) + (library_.active ? 0.0 : reduce_s);
    clock_[r] = end;
    step_end_[r] = end;
  }

  bool failed() const { return false; }

  ExecutionResult result() const {
    ExecutionResult out;
    out.rank_finish_s = clock_;
    out.time_s = clock_.empty() ? 0.0 : *std::max_element(clock_.begin(), clock_.end());
    out.messages = messages_;
    out.bytes_sent = bytes_sent_;
    out.trace = trace_;
    return out;
  }

private:
  void record(std::size_t src, std::size_t dst, const Op& send, double start_s, double end_s) {
    if (!o_.record_trace) return;
    trace_.transfers.push_back(
        {static_cast<std::int32_t>(src), static_cast<std::int32_t>(dst), s_.span_bytes(send.span()), start_s, end_s});
  }

  // Latency, narrowest bandwidth and gap of the route of every (sender, receiver) pair the schedule uses, where the
  // topology's paths are not cheap to find each time (Topology::paths_are_cheap).
  void route_pairs() {
    const auto p = static_cast<std::size_t>(s_.ranks);
    route_schedule_pairs(*o_.topology, o_.accelerator_of, s_, [&](int src, int dst, const std::vector<RouteHop>& hops) {
      routes_[static_cast<std::size_t>(src) * p + static_cast<std::size_t>(dst)] = route_path(*o_.topology, hops);
    });
  }

  LinkSpec path(std::size_t src, std::size_t dst) const {
    if (routes_.empty()) {
      return o_.topology->path(o_.accelerator_of[src], o_.accelerator_of[dst]);
    }
    return routes_.at(src * clock_.size() + dst);
  }

  const Schedule& s_;
  const AnalyticalOptions& o_;
  SegmentLibraryCost library_;    // the collective library's costs in the schedule's protocol
  std::vector<double> clock_;     // post time of the rank's current step, or its finish time once done
  std::vector<double> step_end_;  // latest completion among the current step's transfers
  bool has_gaps_ = false;         // some route has a per-message gap
  std::uint64_t messages_ = 0;
  std::uint64_t bytes_sent_ = 0;
  std::unordered_map<std::size_t, LinkSpec> routes_;  // src * P + dst -> route; empty where paths are cheap
  RunTrace trace_;                                    // (record_trace)
};

}  // namespace

ExecutionResult run_analytical(const Schedule& schedule, const AnalyticalOptions& options) {
  if (schedule.compact()) return run_analytical(expand(schedule), options);  // it walks every step written out
  if (std::string problem = check_well_formed(schedule); !problem.empty()) {
    throw std::invalid_argument("analytical executor: " + problem);
  }
  if (options.topology != nullptr && options.accelerator_of.size() != static_cast<std::size_t>(schedule.ranks)) {
    throw std::invalid_argument("analytical executor: the schedule has " + std::to_string(schedule.ranks) +
                                " ranks but " + std::to_string(options.accelerator_of.size()) +
                                " are placed on the cluster");
  }
  const auto started = std::chrono::steady_clock::now();
  const Placed<AnalyticalOptions> placed(options, schedule.ranks);
  ClockHandler handler(schedule, placed.options);  // (the endpoints' reduce rates: position_reduce_Bps)
  const WalkOutcome outcome = walk_schedule(schedule, handler);
  if (!outcome.error.empty()) throw std::runtime_error("analytical executor: " + outcome.error);
  ExecutionResult result = handler.result();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

}  // namespace dtsim
