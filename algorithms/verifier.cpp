#include "algorithms/verifier.hpp"

#include <algorithm>
#include <vector>

#include "algorithms/step_walker.hpp"

namespace dtsim {
namespace {

using Count = std::uint16_t;

struct Landing {  // a matched receive, applied when its step ends
  std::uint32_t chunk;
  OpKind kind;
  std::uint32_t snapshot;
};

// Gives the walk its meaning in contribution counts: counts_[rank][chunk][k] = how often rank k's contribution is in
// the rank's copy of the chunk. A send snapshots its chunk's counts; a receive applies the snapshot at step end.
class CountingHandler {
public:
  explicit CountingHandler(const Schedule& s)
      : s_(s),
        p_(static_cast<std::size_t>(s.ranks)),
        c_(s.chunks.size()),
        counts_(p_ * c_ * p_, 0),
        landings_(p_),
        steps_(p_, 0) {
    for (std::size_t r = 0; r < p_; ++r) {
      for (std::size_t c = 0; c < c_; ++c)
        cell(r, c)[r] = 1;  // allreduce: each rank contributes every chunk once
    }
  }

  std::uint32_t on_send_posted(std::size_t rank, const Op& send) {
    ++report_.messages;
    report_.bytes_sent += s_.chunk_bytes(send.chunk());
    std::uint32_t slot;
    if (!free_slots_.empty()) {
      slot = free_slots_.back();
      free_slots_.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(pool_.size() / p_);
      pool_.resize(pool_.size() + p_);
    }
    const Count* from = cell(rank, send.chunk());
    std::copy(from, from + p_, pool_.begin() + static_cast<std::ptrdiff_t>(slot * p_));
    return slot;
  }

  void on_matched(std::size_t src, std::size_t dst, std::uint32_t snapshot, const Op& send, const Op& recv) {
    if (send.chunk() != recv.chunk()) {
      fail("rank " + std::to_string(src) + " sends chunk " + std::to_string(send.chunk()) + " to rank " +
           std::to_string(dst) + ", which receives chunk " + std::to_string(recv.chunk()) + " in that place");
    }
    landings_[dst].push_back(Landing{recv.chunk(), recv.kind(), snapshot});
  }

  void on_step_done(std::size_t r, std::span<const Op> step) {
    check_races(r, step);
    for (const Landing& landing : landings_[r]) {
      Count* to = cell(r, landing.chunk);
      const Count* from = pool_.data() + static_cast<std::size_t>(landing.snapshot) * p_;
      if (landing.kind == OpKind::recv_copy) {
        std::copy(from, from + p_, to);
      } else {
        for (std::size_t k = 0; k < p_; ++k)
          to[k] = static_cast<Count>(to[k] + from[k]);
      }
      free_slots_.push_back(landing.snapshot);
    }
    landings_[r].clear();
    report_.max_steps = std::max(report_.max_steps, ++steps_[r]);
  }

  bool failed() const { return !report_.error.empty(); }

  void check_postcondition() {
    for (std::size_t r = 0; r < p_ && !failed(); ++r) {
      for (std::size_t c = 0; c < c_ && !failed(); ++c) {
        const Count* counts = cell(r, c);
        for (std::size_t k = 0; k < p_; ++k) {
          if (counts[k] != 1) {
            fail("allreduce postcondition: rank " + std::to_string(r) + " chunk " + std::to_string(c) +
                 " holds the contribution of rank " + std::to_string(k) + " " + std::to_string(counts[k]) +
                 " times (expected exactly once)");
            break;
          }
        }
      }
    }
  }

  void fail(const std::string& message) {
    if (report_.error.empty()) report_.error = message;
  }

  VerifyReport& report() { return report_; }

private:
  Count* cell(std::size_t rank, std::size_t chunk) { return counts_.data() + (rank * c_ + chunk) * p_; }

  void check_races(std::size_t r, std::span<const Op> step) {
    for (std::size_t a = 0; a < step.size(); ++a) {
      if (step[a].kind() != OpKind::recv_copy) continue;
      for (std::size_t b = 0; b < step.size(); ++b) {
        if (a != b && step[b].is_recv() && step[b].chunk() == step[a].chunk()) {
          fail("rank " + std::to_string(r) + " step " + std::to_string(steps_[r]) + ": chunk " +
               std::to_string(step[a].chunk()) + " is received twice in one step, once as a copy");
          return;
        }
      }
    }
  }

  const Schedule& s_;
  std::size_t p_;
  std::size_t c_;
  std::vector<Count> counts_;
  std::vector<std::vector<Landing>> landings_;
  std::vector<std::uint64_t> steps_;
  std::vector<Count> pool_;
  std::vector<std::uint32_t> free_slots_;
  VerifyReport report_;
};

}  // namespace

VerifyReport verify(const Schedule& schedule, std::uint64_t max_state_cells) {
  if (std::string problem = check_well_formed(schedule); !problem.empty()) return VerifyReport{false, problem, 0, 0, 0};
  const auto p = static_cast<std::uint64_t>(schedule.ranks);
  const std::uint64_t cells = p * p * schedule.chunks.size();
  if (cells > max_state_cells) {
    return VerifyReport{false,
                        "schedule too large to verify: " + std::to_string(p) + " ranks x " +
                            std::to_string(schedule.chunks.size()) + " chunks needs " + std::to_string(cells) +
                            " state cells (limit " + std::to_string(max_state_cells) + ")",
                        0, 0, 0};
  }
  CountingHandler handler(schedule);
  const WalkOutcome outcome = walk_schedule(schedule, handler);
  if (!outcome.error.empty()) handler.fail(outcome.error);
  if (!handler.failed()) handler.check_postcondition();
  VerifyReport report = handler.report();
  report.ok = report.error.empty();
  return report;
}

}  // namespace dtsim
